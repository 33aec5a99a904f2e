package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/layout"
)

// Placeholders the inventory's rows spell names with.
const (
	aName, aClient, aField = "<name>", "<client id>", "<field>"
)

// patterns are the names layout.go spells, each function's with the
// inventory's placeholders. Every exported function that returns a name
// has one (TestStateRows checks it against layout.go's source).
var patterns = map[string]string{
	"LockChannel":             layout.LockChannel(aName),
	"GroupLockChannel":        layout.GroupLockChannel(aName),
	"LockClientChannel":       layout.LockClientChannel(aName, aClient),
	"FairWaiterChannel":       layout.FairWaiterChannel(aName, aField),
	"LockWaiters":             layout.LockWaiters(aName),
	"LockGone":                layout.LockGone(aName),
	"LockGoneDue":             layout.LockGoneDue(aName),
	"PermitsGone":             layout.PermitsGone(aName),
	"LockToken":               layout.LockToken(aName),
	"FairQueue":               layout.FairQueue(aName),
	"FairTimeouts":            layout.FairTimeouts(aName),
	"RWLockChannel":           layout.RWLockChannel(aName),
	"ReadTimeoutsPrefix":      layout.ReadTimeoutsPrefix(aName),
	"ReadTimeoutPrefix":       layout.ReadTimeoutPrefix(aName, aField),
	"SemaphoreChannel":        layout.SemaphoreChannel(aName),
	"SemaphoreWaiters":        layout.SemaphoreWaiters(aName),
	"SemaphoreWatcher":        layout.SemaphoreWatcher(aName),
	"SemaphoreGrants":         layout.SemaphoreGrants(aName),
	"SemaphoreAttempts":       layout.SemaphoreAttempts(aName),
	"SemaphoreClientChannels": layout.SemaphoreClientChannels(aName),
	"SemaphoreClientChannel":  layout.SemaphoreClientChannel(aName, aClient),
	"PermitTimeouts":          layout.PermitTimeouts(aName),
	"LatchChannel":            layout.LatchChannel(aName),
	"ElectionLock":            layout.ElectionLock(aName),
	"ElectionLeader":          layout.ElectionLeader(aName),
	"ElectionTerm":            layout.ElectionTerm(aName),
	"ElectionChannel":         layout.ElectionChannel(aName),
	"ElectionLog":             layout.ElectionLog(aName),
	"ClientChannel":           layout.ClientChannel(aClient),
	"FenceLast":               layout.FenceLast("<resource>"),
}

// TestStateRows: docs/state.md, the inventory of what relock keeps, has
// a row for every name layout.go spells. A function added to layout.go
// fails here until it has a pattern above and the inventory a row.
func TestStateRows(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "layout.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range file.Decls {
		f, ok := d.(*ast.FuncDecl)
		if !ok || !f.Name.IsExported() || f.Recv != nil || !returnsString(f) {
			continue
		}
		if _, ok := patterns[f.Name.Name]; !ok {
			t.Errorf("layout.%s has no pattern in this test (and so, perhaps, no row in docs/state.md)", f.Name.Name)
		}
	}
	doc, err := os.ReadFile("../../docs/state.md")
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		if first := strings.SplitN(line, "|", 3); len(first) == 3 {
			cells = append(cells, first[1])
		}
	}
	if len(cells) == 0 {
		t.Fatal("docs/state.md has no table rows")
	}
	for fn, p := range patterns {
		found := false
		for _, c := range cells {
			if strings.Contains(c, "`"+p+"`") || strings.Contains(c, "`"+p+":") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/state.md has no row whose first cell names %q (layout.%s)", p, fn)
		}
	}
}

// returnsString reports whether f returns one string.
func returnsString(f *ast.FuncDecl) bool {
	r := f.Type.Results
	if r == nil || len(r.List) != 1 || len(r.List[0].Names) > 1 {
		return false
	}
	id, ok := r.List[0].Type.(*ast.Ident)
	return ok && id.Name == "string"
}
