package inspect

import (
	"errors"
	"regexp"
	"strings"
)

// glob compiles a pattern as SCAN MATCH takes it (Redis's stringmatch:
// *, ?, [set] with ^ and ranges, \ quoting) into a matcher of whole
// names. Find matches names rather than keys, since the keys of an
// election or a fencing counter wrap their name; "" and "*" match all.
func glob(pattern string) (func(string) bool, error) {
	if pattern == "" || pattern == "*" {
		return func(string) bool { return true }, nil
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 < len(pattern) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			set := pattern[i+1 : i+1+end]
			b.WriteByte('[')
			if s, ok := strings.CutPrefix(set, "^"); ok {
				b.WriteByte('^')
				set = s
			}
			for j := 0; j < len(set); j++ {
				if set[j] == '\\' && j+1 < len(set) {
					j++
				}
				if set[j] == '-' && j > 0 && j < len(set)-1 {
					b.WriteByte('-')
					continue
				}
				b.WriteString(regexp.QuoteMeta(set[j : j+1]))
			}
			b.WriteByte(']')
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
