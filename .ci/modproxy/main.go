// Command modproxy writes a Go module proxy, in the layout that GOPROXY
// reads from a file:// URL, serving modules of this working tree at one
// version: what `go get` finds once the tree is tagged. CI builds a
// consumer module against it (.ci/run), which proves that the modules
// resolve from their tags alone, without the replace of relockotel/go.mod.
//
// Usage:
//
//	go run . -version vX.Y.Z -out DIR MODULEDIR...
//
// Each MODULEDIR is a directory holding a go.mod. Its zip follows the
// module zip format (golang.org/x/mod/zip): nested modules, such as
// relockotel/ within the main module, are left out of it, as the go command
// would leave them out of a tag's.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	version := flag.String("version", "", "the version to serve every module at, vX.Y.Z")
	out := flag.String("out", "", "the proxy's directory")
	flag.Parse()
	if *version == "" || *out == "" || flag.NArg() == 0 {
		log.Fatal("usage: modproxy -version vX.Y.Z -out DIR MODULEDIR...")
	}
	for _, dir := range flag.Args() {
		if err := serve(*out, dir, *version); err != nil {
			log.Fatalf("modproxy: %s: %v", dir, err)
		}
	}
}

// serve writes the module in dir at version into the proxy at out:
// <module>/@v/list, <version>.info, .mod and .zip.
func serve(out, dir, version string) error {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	at := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, mv, dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", path, version)
	return nil
}
