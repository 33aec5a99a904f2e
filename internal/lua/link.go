package lua

import (
	"fmt"
	"regexp"
	"strings"
)

// link returns the script body preceded by those top-level definitions of
// the preludes that body uses, directly or through another definition, in
// the preludes' order.
//
// Redis runs a script's whole text on every call, and Lua 5.1 makes a new
// closure of every local function each time its definition runs, so a
// helper no call path needs still costs the server an allocation on every
// EVALSHA: with its two preludes whole, the reentrant lock's Lock+Unlock
// pair cost Redis about 0.5 µs more. Leaving them out changes no reply: a
// script can only reach a local defined above it, and link keeps every
// such local it names.
//
// A prelude is a sequence of definitions, each its comment, then
// "local function <name>(...)" up to its closing "end" in the first
// column, or one line "local <name> = <value>" (a value with no other
// effect, since an unused one is left out) or "local <name>". link
// panics on a prelude it cannot read so: preludes are constants of this
// package, and the panic fails every test that loads it.
func link(body string, preludes ...string) string {
	defs := definitions(strings.Join(preludes, "\n"))
	used := identifiers(body)
	keep := make([]bool, len(defs))
	for i := len(defs) - 1; i >= 0; i-- {
		for _, n := range defs[i].names {
			if used[n] {
				keep[i] = true
			}
		}
		if keep[i] {
			for id := range identifiers(defs[i].text) {
				used[id] = true
			}
		}
	}
	var b strings.Builder
	for i, d := range defs {
		if keep[i] {
			b.WriteString(d.text)
		}
	}
	b.WriteString(body)
	return b.String()
}

// definition is one top-level local of a prelude: its text, the comment
// above it included, and the names it binds.
type definition struct {
	text  string
	names []string
}

var (
	functionLine = regexp.MustCompile(`^local function ([A-Za-z_][A-Za-z0-9_]*)\(`)
	localLine    = regexp.MustCompile(`^local ([A-Za-z_][A-Za-z0-9_]*(?:, *[A-Za-z_][A-Za-z0-9_]*)*)(?: *=.*)?$`)
)

// definitions splits prelude into its top-level definitions.
func definitions(prelude string) []definition {
	var (
		defs []definition
		text strings.Builder // the current definition's lines so far
		fn   bool            // inside a function's body
	)
	for _, line := range strings.SplitAfter(prelude, "\n") {
		text.WriteString(line)
		bare := strings.TrimRight(line, "\r\n")
		switch {
		case fn:
			if bare == "end" {
				fn = false
				defs[len(defs)-1].text = text.String()
				text.Reset()
			}
		case bare == "" || strings.HasPrefix(strings.TrimLeft(bare, " \t"), "--"):
		case functionLine.MatchString(bare):
			fn = true
			defs = append(defs, definition{names: []string{functionLine.FindStringSubmatch(bare)[1]}})
		case localLine.MatchString(bare):
			var names []string
			for _, n := range strings.Split(localLine.FindStringSubmatch(bare)[1], ",") {
				names = append(names, strings.TrimSpace(n))
			}
			defs = append(defs, definition{text: text.String(), names: names})
			text.Reset()
		default:
			panic(fmt.Sprintf("lua: prelude line %q is not a top-level local", bare))
		}
	}
	if fn {
		panic("lua: prelude ends inside a function")
	}
	return defs
}

// identifiers returns the names src mentions outside its comments and
// string literals. A keyword or field name counts too, which can only keep
// a definition that is not needed, never drop one that is.
func identifiers(src string) map[string]bool {
	ids := make(map[string]bool)
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			if strings.HasPrefix(src[i:], "--[[") || strings.HasPrefix(src[i:], "--[=") {
				panic("lua: long comments are not supported")
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '[' && (strings.HasPrefix(src[i:], "[[") || strings.HasPrefix(src[i:], "[=")):
			panic("lua: long strings are not supported")
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			ids[src[i:j]] = true
			i = j
		case c >= '0' && c <= '9':
			for i < len(src) && (src[i] == '.' || src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9') {
				i++
			}
		default:
			i++
		}
	}
	return ids
}
