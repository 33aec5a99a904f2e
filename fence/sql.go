package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Schema creates the table in which Advance records the last token of
// each resource, if it does not exist: run it once, as a migration
// would. It is PostgreSQL's and SQLite's; in another database give the
// table these columns, resource as its primary key, and an
// INSERT ... ON CONFLICT that both of them would take.
const Schema = `CREATE TABLE IF NOT EXISTS relock_fence (
	resource TEXT PRIMARY KEY,
	token    BIGINT NOT NULL
)`

// advance inserts the resource's row, or raises its token when the
// recorded one is not higher: one statement, so no other writer's token
// can come between the comparison and the update. A refusal changes no
// row. $1 and $2 appear once each and in order, so SQLite's drivers,
// which number "$NNN" parameters by their first appearance or by NNN,
// bind them as PostgreSQL does.
const advance = `INSERT INTO relock_fence (resource, token) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET token = excluded.token
WHERE relock_fence.token <= excluded.token`

const lastToken = `SELECT token FROM relock_fence WHERE resource = $1`

// Advance records token as the last token of resource in tx, or returns
// an error matching ErrStale, having changed nothing, when a higher one
// is recorded. Call it before the transaction's other writes of the
// resource: the transaction then commits them only if no higher token
// was recorded first.
//
// Why it holds: Advance writes the resource's row, which the database
// keeps locked until tx ends. A writer with a higher token that comes
// later waits for that, then records its own; one with a lower token
// that comes later waits too, then finds the higher token and is refused.
// So the writes of a resource commit in the order of their tokens, and
// none with a lower token commits after one with a higher token. In
// PostgreSQL at REPEATABLE READ or SERIALIZABLE, a waiter that finds the
// row changed since its snapshot gets a serialization error instead
// (SQLSTATE 40001): a refusal too, after which the whole transaction may
// be retried, as at those levels it always may. SQLite locks the whole
// database for a writer rather than the row, to the same effect; open it
// with a busy timeout, so that concurrent writers wait rather than fail
// with SQLITE_BUSY.
func Advance(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if err := checkToken(resource, token); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, advance, resource, token)
	if err != nil {
		return fmt.Errorf("fence: %q: record token %d: %w", resource, token, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("fence: %q: record token %d: %w", resource, token, err)
	}
	if n > 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRowContext(ctx, lastToken, resource).Scan(&last); err != nil {
		return fmt.Errorf("fence: %q: token %d refused; reading the last: %w", resource, token, errors.Join(ErrStale, err))
	}
	return &StaleError{Resource: resource, Token: token, Last: last}
}

// Exec runs query with args on db in a transaction of its own, after
// Advance, and commits it: the statement takes effect only when token is
// not stale for resource, and otherwise Exec returns an error matching
// ErrStale. For several statements, call Advance in a transaction of
// your own.
func Exec(ctx context.Context, db *sql.DB, resource string, token int64, query string, args ...any) (sql.Result, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("fence: %q: %w", resource, err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := Advance(ctx, tx, resource, token); err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("fence: %q: %w", resource, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("fence: %q: commit: %w", resource, err)
	}
	return res, nil
}
