package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGenerated fails when a package's generated file is not what
// facadegen writes now: after an edit of the template or the table,
// or by hand. Run go generate in the package named to fix it.
func TestGenerated(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Pkg] {
			continue
		}
		seen[k.Pkg] = true
		want, err := render(k.Pkg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", k.Pkg, File)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what facadegen writes now: run go generate ./%s", path, k.Pkg)
		}
	}
}

// TestComment: doc text wraps at width, paragraphs stay apart.
func TestComment(t *testing.T) {
	got := comment("\nA b\nc.\n\nNext  one.\n")
	if want := "// A b c.\n//\n// Next one."; got != want {
		t.Errorf("comment = %q, want %q", got, want)
	}
	long := comment("aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo")
	for _, line := range bytes.Split([]byte(long), []byte("\n")) {
		if len(line) > width {
			t.Errorf("line %q is longer than %d", line, width)
		}
	}
}
