package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fence"
)

// The tests' own table: a value per resource, written under the fence.
const dataSchema = `CREATE TABLE IF NOT EXISTS fence_test_data (
	resource TEXT PRIMARY KEY,
	value    BIGINT NOT NULL
)`

// TestSQLite runs the SQL suite on SQLite through a pure-Go driver, on a
// database file of the test's own.
func TestSQLite(t *testing.T) {
	// A busy timeout, as the Advance doc asks: concurrent writers wait
	// for SQLite's database lock rather than fail.
	dsn := filepath.Join(t.TempDir(), "fence.db") + "?_pragma=busy_timeout(20000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	testSQL(t, db)
}

// testSQL is the suite every database passes; statements use $1, $2, ...
// placeholders, which SQLite takes too.
func testSQL(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	for _, q := range []string{fence.Schema, fence.Schema, dataSchema} { // Schema twice: IF NOT EXISTS
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("Order", func(t *testing.T) { sqlOrder(t, db) })
	t.Run("Exec", func(t *testing.T) { sqlExec(t, db) })
	t.Run("Concurrent", func(t *testing.T) { sqlConcurrent(t, db) })
	t.Run("ColumnRecipe", func(t *testing.T) { sqlColumn(t, db) })
}

// write sets resource's value to v in a transaction that Advance fences
// with token, and commits it when Advance accepts.
func write(ctx context.Context, db *sql.DB, resource string, token, v int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fence.Advance(ctx, tx, resource, token); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fence_test_data (resource, value) VALUES ($1, $2)
		ON CONFLICT (resource) DO UPDATE SET value = excluded.value`, resource, v); err != nil {
		return err
	}
	return tx.Commit()
}

// read returns resource's value and its recorded token (-1 when absent).
func read(t *testing.T, db *sql.DB, resource string) (value, token int64) {
	t.Helper()
	value, token = -1, -1
	for q, dst := range map[string]*int64{
		`SELECT value FROM fence_test_data WHERE resource = $1`: &value,
		`SELECT token FROM relock_fence WHERE resource = $1`:    &token,
	} {
		if err := db.QueryRow(q, resource).Scan(dst); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
	}
	return value, token
}

// sqlOrder: increasing and equal tokens commit, lower ones are refused
// and their transaction's write is not committed.
func sqlOrder(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	res := t.Name()
	want, last := int64(-1), int64(-1)
	for i, w := range []struct {
		token int64
		ok    bool
	}{{5, true}, {5, true}, {7, true}, {6, false}, {0, false}, {1 << 62, true}, {1<<62 - 1, false}} {
		v := int64(i)
		err := write(ctx, db, res, w.token, v)
		if w.ok {
			if err != nil {
				t.Fatalf("write %d, token %d: %v", i, w.token, err)
			}
			want, last = v, w.token
		} else {
			wantStale(t, err, w.token, last)
		}
		if value, token := read(t, db, res); value != want || token != last {
			t.Fatalf("after write %d: value %d, token %d; want %d, %d", i, value, token, want, last)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := fence.Advance(ctx, tx, res, -1); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Advance with a negative token: %v", err)
	}
}

// sqlExec: Exec runs its statement only with a token that is not stale.
func sqlExec(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	res := t.Name()
	upsert := `INSERT INTO fence_test_data (resource, value) VALUES ($1, $2)
		ON CONFLICT (resource) DO UPDATE SET value = excluded.value`
	r, err := fence.Exec(ctx, db, res, 3, upsert, res, 30)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("RowsAffected = %d, %v", n, err)
	}
	_, err = fence.Exec(ctx, db, res, 2, upsert, res, 20)
	wantStale(t, err, 2, 3)
	if value, token := read(t, db, res); value != 30 || token != 3 {
		t.Fatalf("value %d, token %d; want 30, 3", value, token)
	}
	// A statement that fails rolls the token back with it.
	if _, err := fence.Exec(ctx, db, res, 4, `INSERT INTO no_such_table VALUES ($1)`, 1); err == nil {
		t.Fatal("Exec of a bad statement succeeded")
	}
	if _, token := read(t, db, res); token != 3 {
		t.Fatalf("token %d after a failed statement, want 3", token)
	}
}

// sqlConcurrent has writers race with tokens handed out in rising order,
// shuffled within blocks, each checking in its transaction, after
// Advance, that no higher token's value was committed before it. The
// value ends as the highest token wrote it.
func sqlConcurrent(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	res := t.Name()
	const writers, tokens = 6, 120
	next := make(chan int64, tokens)
	for _, token := range shuffled(tokens, 2*writers) {
		next <- token
	}
	close(next)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for token := range next {
				if err := checkedWrite(ctx, db, res, token); err != nil && !errors.Is(err, fence.ErrStale) {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if value, token := read(t, db, res); value != tokens || token != tokens {
		t.Fatalf("value %d, token %d; want %d, %d", value, token, tokens, tokens)
	}
}

// checkedWrite is write, with the value set to token, failing when the
// value it replaces is higher: a write committed out of token order.
func checkedWrite(ctx context.Context, db *sql.DB, resource string, token int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fence.Advance(ctx, tx, resource, token); err != nil {
		return err
	}
	var prev int64
	err = tx.QueryRowContext(ctx, `SELECT value FROM fence_test_data WHERE resource = $1`, resource).Scan(&prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if prev > token {
		return fmt.Errorf("token %d accepted after token %d committed", token, prev)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fence_test_data (resource, value) VALUES ($1, $2)
		ON CONFLICT (resource) DO UPDATE SET value = excluded.value`, resource, token); err != nil {
		return err
	}
	return tx.Commit()
}

// sqlColumn runs docs/fencing.md's recipe for a table that carries its
// own token column: the UPDATE's WHERE refuses a lower token.
func sqlColumn(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS fence_test_accounts (
		id          TEXT PRIMARY KEY,
		balance     BIGINT NOT NULL,
		fence_token BIGINT NOT NULL DEFAULT 0
	)`); err != nil {
		t.Fatal(err)
	}
	id := t.Name()
	if _, err := db.ExecContext(ctx, `INSERT INTO fence_test_accounts (id, balance) VALUES ($1, 0)`, id); err != nil {
		t.Fatal(err)
	}
	update := `UPDATE fence_test_accounts SET balance = $1, fence_token = $2
		WHERE id = $3 AND fence_token <= $2`
	for _, w := range []struct {
		balance, token, rows int64
	}{{100, 5, 1}, {90, 5, 1}, {80, 4, 0}, {70, 6, 1}} {
		r, err := db.ExecContext(ctx, update, w.balance, w.token, id)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := r.RowsAffected(); n != w.rows {
			t.Fatalf("token %d: %d rows updated, want %d", w.token, n, w.rows)
		}
	}
	var balance int64
	if err := db.QueryRowContext(ctx, `SELECT balance FROM fence_test_accounts WHERE id = $1`, id).Scan(&balance); err != nil || balance != 70 {
		t.Fatalf("balance %d, %v; want 70", balance, err)
	}
}
