# SPDX-License-Identifier: GPL-2.0-only
# help2man.awk — turns one `memtrack [COMMAND] --help` text into a roff manual page (run by docs/man/gen.sh).
# -v page=memtrack-record -v summary=TEXT -v version=V -v extra=FILE -v seealso="memtrack(1), ..."
# The help's layout is the source: "usage:" lines, then items (an indented line: an option or a command, its
# text after a gap of two spaces, continued by lines indented ten or more), headings (an unindented line ending
# with ':' or '):'), and paragraphs (other unindented lines; "Exit status:" starts its own section).
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
function line(s) {
	s = esc(s)
	if (s ~ /^[.']/)
		s = "\\&" s
	print s
}
# An item's text starts after a gap of two spaces, or at the column the items before it used when its tag fills
# that column but one space ("--between A B what ...").
function item(s,    tag, rest, i) {
	i = match(s, /[^ ]  +/)
	if (i && RSTART > 1)
		col = RSTART + RLENGTH
	else if (col && length(s) > col && substr(s, col - 1, 1) == " " && substr(s, col, 1) != " ")
		i = 1
	tag = i ? substr(s, 1, col - 1) : s
	rest = i ? substr(s, col) : ""
	sub(/^ +/, "", tag)
	sub(/ +$/, "", tag)
	para = 0
	print ".TP"
	print "\\fB" esc(tag) "\\fR"
	if (rest != "")
		line(rest)
}
BEGIN {
	upper = toupper(page)
	src = page == "memtrack" ? "memtrack --help" : "memtrack " substr(page, 10) " --help"
	print ".\\\" Generated from `" src "` by docs/man/gen.sh: edit the help text, not this page."
	print ".TH " upper " 1 \"\" \"memtrack " version "\" \"memtrack manual\""
	print ".SH NAME"
	print esc(page) " \\- " esc(summary)
	print ".SH SYNOPSIS"
	print ".nf"
	state = "usage"
}
state == "usage" && (/^usage: / || /^   +[^ ]/) {
	s = $0
	sub(/^usage: /, "", s)
	sub(/^ +/, "", s)
	line(s)
	next
}
state == "usage" {
	print ".fi"
	print ".SH DESCRIPTION"
	state = "body"
}
/^$/ { print ".PP"; para = 0; next }
/^          / { s = $0; sub(/^ +/, "", s); line(s); next }
/^ +[^ ]/ { item($0); next }
/^Exit status:/ {
	print ".SH EXIT STATUS"
	s = $0
	sub(/^Exit status: */, "", s)
	line(s)
	para = 1
	next
}
/:$/ && length($0) < 80 {
	print ".SS " esc($0)
	para = 0
	next
}
{
	if (!para)
		print ".PP"
	para = 1
	line($0)
}
END {
	if (state == "usage")
		print ".fi"
	if (extra != "")
		while ((getline l < extra) > 0)
			print l
	if (seealso != "") {
		print ".SH SEE ALSO"
		print seealso
	}
}
