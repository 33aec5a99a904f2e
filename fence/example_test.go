package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/reentrant"
)

// A holder takes a fenced lock and pauses past its lease; the next holder
// takes the lock with a higher token and writes. When the paused holder
// wakes and writes, the guard refuses it: the newer value stays.
func ExampleRedis() {
	m, err := miniredis.Run() // in your code: your Redis
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	// Each holder stands for a process of its own, with its own clients.
	newHolder := func() (*reentrant.Mutex, func()) {
		r := redis.NewClient(&redis.Options{Addr: m.Addr()})
		rc, err := relock.New(r, nil)
		if err != nil {
			log.Fatal(err)
		}
		// A fixed lease, so that a pause can outlast it.
		mu := reentrant.New(rc, "invoices:7", &reentrant.Options{Fencing: true, Lease: time.Second})
		return mu, func() { rc.Close(); r.Close() }
	}
	guard := fence.NewRedis(rdb)
	const key = "{invoices:7}:total" // the resource's hash tag: one slot with its token

	first, closeFirst := newHolder()
	defer closeFirst()
	lctx, err := first.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer first.Unlock(lctx) // relock.ErrNotHeld by then: its lease ran out
	token1, _ := first.Token(lctx)
	fmt.Println("holder 1 takes the lock, token", token1)

	m.FastForward(2 * time.Second) // holder 1 pauses (a GC, a stalled VM): its lease runs out

	second, closeSecond := newHolder()
	defer closeSecond()
	lctx2, err := second.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer second.Unlock(lctx2)
	token2, _ := second.Token(lctx2)
	err = guard.Set(ctx, "invoices:7", token2, key, "120.00", 0)
	fmt.Println("holder 2 takes the lock, token", token2, "and writes:", err)

	err = guard.Set(ctx, "invoices:7", token1, key, "100.00", 0) // holder 1 wakes
	fmt.Println("holder 1 writes late:", errors.Is(err, fence.ErrStale), err)
	fmt.Println("total:", rdb.Get(ctx, key).Val())
	// Output:
	// holder 1 takes the lock, token 1
	// holder 2 takes the lock, token 2 and writes: <nil>
	// holder 1 writes late: true fence: "invoices:7": stale token 1, 2 seen
	// total: 120.00
}

// Advance fences a transaction: its writes commit only while its token
// is the highest recorded for the resource.
func ExampleAdvance() {
	dir, err := os.MkdirTemp("", "fence-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.db")) // or PostgreSQL
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		fence.Schema,
		`CREATE TABLE invoices (id TEXT PRIMARY KEY, total TEXT NOT NULL)`,
		`INSERT INTO invoices VALUES ('7', '0.00')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			log.Fatal(err)
		}
	}

	// setTotal writes as the holder of token: in your code, the fenced
	// lock's Mutex.Token or the election's TermOf.
	setTotal := func(token int64, total string) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fence.Advance(ctx, tx, "invoices:7", token); err != nil {
			return err // fence.ErrStale: a newer holder has written
		}
		if _, err := tx.ExecContext(ctx, `UPDATE invoices SET total = $1 WHERE id = '7'`, total); err != nil {
			return err
		}
		return tx.Commit()
	}
	fmt.Println("token 2:", setTotal(2, "120.00"))
	fmt.Println("token 1:", setTotal(1, "100.00"))

	var total string
	if err := db.QueryRowContext(ctx, `SELECT total FROM invoices WHERE id = '7'`).Scan(&total); err != nil {
		log.Fatal(err)
	}
	fmt.Println("total:", total)
	// Output:
	// token 2: <nil>
	// token 1: fence: "invoices:7": stale token 1, 2 seen
	// total: 120.00
}
