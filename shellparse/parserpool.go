package shellparse

import (
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// parsers keeps plain parsers (a dialect, no other option) for reuse:
// a parser is several kilobytes, and loading a config splits every rule's
// pattern, twice, in a process that lives for one command. Parse and
// WordsSeq reset a parser before use.
var parsers sync.Map // syntax.LangVariant → *sync.Pool

func getParser(lang syntax.LangVariant) *syntax.Parser {
	pool, ok := parsers.Load(lang)
	if !ok {
		pool, _ = parsers.LoadOrStore(lang, &sync.Pool{New: func() any {
			return syntax.NewParser(syntax.Variant(lang))
		}})
	}
	return pool.(*sync.Pool).Get().(*syntax.Parser)
}

func putParser(lang syntax.LangVariant, p *syntax.Parser) {
	if pool, ok := parsers.Load(lang); ok {
		pool.(*sync.Pool).Put(p)
	}
}
