package lua

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaders: every script of the package is embedded by one of its Go
// files, and every one but a prelude opens with "-- <its name>:" and a
// header that names its KEYS and ARGV when its code reads them (itself
// or by naming its prelude's), and its reply: the package doc's
// convention.
func TestHeaders(t *testing.T) {
	gos, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var embeds strings.Builder
	for _, f := range gos {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		embeds.Write(b)
	}
	files, err := filepath.Glob("*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(embeds.String(), "//go:embed "+f+"\n") {
			t.Errorf("%s is not embedded by the package", f)
		}
		name := strings.TrimSuffix(f, ".lua")
		if strings.HasSuffix(name, "_prelude") {
			continue
		}
		var header, code strings.Builder
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "--") && code.Len() == 0 {
				header.WriteString(line + "\n")
			} else {
				code.WriteString(line + "\n")
			}
		}
		h := header.String()
		if !strings.HasPrefix(h, "-- "+name+":") || !strings.Contains(h, "\n-- Reply") {
			t.Errorf("%s: the header does not open with %q or has no Reply", f, "-- "+name+":")
		}
		for _, table := range []string{"KEYS", "ARGV"} {
			if strings.Contains(code.String(), table+"[") && !strings.Contains(h, table) {
				t.Errorf("%s reads %s, which its header does not name", f, table)
			}
		}
	}
}
