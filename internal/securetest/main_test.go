package securetest_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, nil) }
