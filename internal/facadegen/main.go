// Command facadegen writes the methods that the hash-lock facades
// (reentrant, spinlock, nonreentrant, fair, grouplock) share, with their
// doc comments, from one template (methods.tmpl) and the table of what
// sets each lock type apart (kinds.go). Each package's go:generate line
// runs it: it writes the package's zz_methods.go. The methods are
// written out rather than promoted from an embedded internal type so
// that go doc and pkg.go.dev list each with its doc comment.
// TestGenerated fails when a file is not what facadegen writes now.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
	"text/template"
)

// File is the name of the file facadegen writes into each package.
const File = "zz_methods.go"

// width is where doc comments wrap, "// " included.
const width = 72

//go:embed methods.tmpl
var source string

func main() {
	log.SetFlags(0)
	pkg := os.Getenv("GOPACKAGE")
	src, err := render(pkg)
	if err != nil {
		log.Fatalf("facadegen: %v", err)
	}
	if err := os.WriteFile(File, src, 0o644); err != nil {
		log.Fatalf("facadegen: %v", err)
	}
}

// A file is the template's input: one package's kinds.
type file struct {
	Pkg        string
	Kinds      []kind
	Fair, Hash bool // some kind is on fairlock, some on hashlock
}

// render returns the gofmt'ed source of pkg's File.
func render(pkg string) ([]byte, error) {
	f := file{Pkg: pkg}
	for _, k := range kinds {
		if k.Pkg == pkg {
			f.Kinds = append(f.Kinds, k)
			f.Fair = f.Fair || k.Fair
			f.Hash = f.Hash || !k.Fair
		}
	}
	if len(f.Kinds) == 0 {
		return nil, fmt.Errorf("no kinds in package %q (run it by go generate in a facade's directory)", pkg)
	}
	var t *template.Template
	t = template.Must(template.New("methods").Funcs(template.FuncMap{
		"doc": func(name string, data any) (string, error) {
			var b strings.Builder
			if err := t.ExecuteTemplate(&b, name, data); err != nil {
				return "", err
			}
			return comment(b.String()), nil
		},
	}).Parse(source))
	var b bytes.Buffer
	if err := t.Execute(&b, f); err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", pkg, err, b.Bytes())
	}
	return src, nil
}

// comment returns text as a Go comment wrapped at width: each blank
// line starts a paragraph, other line breaks are spaces.
func comment(text string) string {
	var out []string
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			continue
		}
		if i > 0 {
			out = append(out, "//")
		}
		line := "// " + words[0]
		for _, w := range words[1:] {
			if len(line)+1+len(w) > width {
				out = append(out, line)
				line = "//"
			}
			line += " " + w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
