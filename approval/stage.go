package approval

// StageReset ends a string (DCS, OSC, APC) left open, which would take
// the prompt as its payload (ST twice: a DCS left just after an ESC
// takes the first one's ESC as payload), and undoes every state a
// program's output can leave a terminal in that changes how text reads:
// an open synchronized update, scroll margins, origin mode, autowrap
// off, insert mode, automatic newline, reverse video, left/right
// margins, character sets and the shift state, attributes (conceal,
// colours), default colours changed by OSC 10/11/12, and a hidden
// cursor. A prompt writes it before drawing.
const StageReset = "\x1b\\\x1b\\\x1b[?2026l" +
	"\x1b[r\x1b[?6l\x1b[?7h\x1b[4l\x1b[20l\x1b[?5l\x1b[?69l" +
	"\x1b(B\x1b)B\x1b*B\x1b+B\x0f" +
	"\x1b[0m\x1b]110\x07\x1b]111\x07\x1b]112\x07\x1b[?25h"

// StageTitle is the terminal title while a prompt is shown.
const StageTitle = "\x1b]0;guardrun: approval needed\x07"

// ttyStageOpen and ttyStageClose frame a prompt on a terminal guardrun
// shares with the program that runs it and whose state it does not know:
// the alternate screen (the program's screen comes back untouched after),
// the title saved and restored on the terminal's title stack.
const (
	ttyStageOpen  = "\x1b[?1049h\x1b[22;0t" + StageReset + StageTitle + "\x1b[H\x1b[2J"
	ttyStageClose = "\x1b[H\x1b[2J\x1b[?1049l\x1b[23;0t"
)
