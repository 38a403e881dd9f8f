package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names. Keep in sync with docs/mcp.md.
const (
	toolRun    = "run"
	toolRead   = "read_file"
	toolWrite  = "write_file"
	toolEdit   = "edit_file"
	toolList   = "list_directory"
	toolSearch = "search_files"
)

const refusals = ` A refusal is a tool error starting with "guardrun:" that says why (blocked by a rule or zone, denied by the person with their note, or needing an approval nobody could give); do not send the same request again unchanged.`

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolRun,
		Title: "Run a shell script (guardrun)",
		Description: "Run a shell script on the user's machine through guardrun. guardrun parses the script, judges every command and file it touches against the person's rules and file zones, " +
			"may ask the person to approve it first, and runs what is allowed inside an OS sandbox: files are writable only in the project's read-write zones, denied paths are invisible, " +
			"and there is no network unless the rules allow it. The script gets no input (stdin is empty) and is ended after timeout_seconds. " +
			"Returns the exit status and the end of stdout and of stderr (max_output_bytes each; a cut stream says how much was dropped). " +
			"A script that ran and failed is not an error: read its exit status." + refusals,
		InputSchema: schemaFor[runIn](func(p map[string]*jsonschema.Schema) {
			p["timeout_seconds"].Minimum, p["timeout_seconds"].Maximum = num(1), num(maxTimeout)
			p["max_output_bytes"].Minimum, p["max_output_bytes"].Maximum = num(minOutput), num(maxOutput)
		}),
		Annotations: annotations("Run a shell script (guardrun)", false, true, false, true),
	}, s.run)

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolRead,
		Title: "Read a text file (guardrun)",
		Description: "Read a text file through guardrun's file zones: denied paths, paths outside every zone and guardrun's own state are refused, and a zone may ask the person first. " +
			"Returns lines start_line to end_line (1-based, inclusive; the whole file by default), at most max_bytes of them (100000 by default), " +
			"and says where to read on when the file goes further. Binary files are refused." + refusals,
		InputSchema: schemaFor[readIn](func(p map[string]*jsonschema.Schema) {
			p["start_line"].Minimum, p["end_line"].Minimum = num(1), num(1)
			p["max_bytes"].Minimum, p["max_bytes"].Maximum = num(1), num(maxReadBytes)
		}),
		Annotations: annotations("Read a text file (guardrun)", true, false, true, false),
	}, s.readFile)

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolWrite,
		Title: "Write a file (guardrun)",
		Description: "Create a file, or replace all of its content, through guardrun's file zones: only inside read-write zones, never denied or guardrun's own files; " +
			"a zone (or a protected name such as .git/hooks) may ask the person first, showing them the diff. The write is atomic and keeps the file's mode; " +
			"missing directories above it are created inside its zone. Content is text, at most 8 MiB. To change part of a file, use edit_file." + refusals,
		Annotations: annotations("Write a file (guardrun)", false, true, true, false),
	}, s.writeFile)

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolEdit,
		Title: "Edit a file by exact replacement (guardrun)",
		Description: "Replace exact text in a file through guardrun's file zones (judged as a read and a write; a zone may ask the person first, showing the diff). " +
			"old_string must match the file exactly, whitespace and line ends included, and occur exactly once unless replace_all is true; " +
			"include enough surrounding lines to make it unique. No regular expressions. The file must exist (use write_file to create one) and be at most 16 MiB." + refusals,
		Annotations: annotations("Edit a file by exact replacement (guardrun)", false, true, false, false),
	}, s.editFile)

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolList,
		Title: "List a directory (guardrun)",
		Description: "List a directory's entries (name, type, size; where a symlink points, never following it) through guardrun's file zones, " +
			"depth levels deep (1 to 5), at most 2000 entries. Entries that are denied, outside every zone or in a zone that asks before each read are left out and counted." + refusals,
		InputSchema: schemaFor[listIn](func(p map[string]*jsonschema.Schema) {
			p["depth"].Minimum, p["depth"].Maximum = num(1), num(maxDepth)
		}),
		OutputSchema: schemaFor[listOut](func(p map[string]*jsonschema.Schema) { notNull(p["entries"]) }),
		Annotations:  annotations("List a directory (guardrun)", true, false, true, false),
	}, s.listDirectory)

	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  toolSearch,
		Title: "Search files by name and content (guardrun)",
		Description: "Search the tree under a directory through guardrun's file zones: by name (a glob such as *.go), by content (a substring, or an RE2 regular expression with regex), or both. " +
			"Returns path:line: text for each matching line (or the matching paths for a name search), at most max_results (100 by default). " +
			"Entries that are denied, outside every zone or in a zone that asks before each read are skipped and counted, as are binary files; .git is not searched, links are not followed, " +
			"and at most 4 MiB of each file is read." + refusals,
		InputSchema: schemaFor[searchIn](func(p map[string]*jsonschema.Schema) {
			p["max_results"].Minimum, p["max_results"].Maximum = num(1), num(maxResults)
		}),
		OutputSchema: schemaFor[searchOut](func(p map[string]*jsonschema.Schema) { notNull(p["matches"]) }),
		Annotations:  annotations("Search files by name and content (guardrun)", true, false, true, false),
	}, s.searchFiles)
}

// annotations are a tool's hints, every one said out loud: the spec's
// defaults for the two that may be left out (destructive, open world)
// are true.
func annotations(title string, readOnly, destructive, idempotent, openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &openWorld}
}

// schemaFor is T's JSON schema as the SDK infers it (descriptions from
// the jsonschema tags, required: the fields without omitempty, no other
// properties), with what tags cannot say added by edit.
func schemaFor[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

// notNull makes an inferred slice (["null","array"]) an array: the tool
// always returns one, and a type list is more than some clients read.
func notNull(s *jsonschema.Schema) { s.Types, s.Type = nil, "array" }

func num(v float64) *float64 { return &v }
