package lockctx_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/relock-go/relock/cmd/relockvet/lockctx"
)

// TestAnalyzer runs the analyzer on testdata/src/a, against stubs of
// the relock packages: each "want" comment there is a report it must
// make, and any report without one fails the test.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lockctx.Analyzer, "a")
}
