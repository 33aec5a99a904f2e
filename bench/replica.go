package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// replicaResult is one row of scenario (r): scenario (a)'s Lock+Unlock on
// the benchmark's server with one replica attached, by a relock kind with
// replica sync on (its default, a WAIT per acquire) or off, or by a peer,
// which never waits for replicas.
type replicaResult struct {
	uncontendedResult
	Sync string `json:"sync"` // on, off or peer
	// Skipped says why the row was not measured (a run with -redis).
	Skipped string `json:"skipped,omitempty"`
}

// The sync column of scenario (r).
const (
	syncOn   = "on"
	syncOff  = "off"
	syncPeer = "peer"
)

// A replicaRow is one measurement of scenario (r).
type replicaRow struct {
	k    kind
	sync string // syncOn, syncOff or syncPeer
}

// replicaRows lists scenario (r)'s rows among ks: each relock kind with
// replica sync on and off, then the first peer, for reference.
func replicaRows(ks []kind) []replicaRow {
	var rows, peer []replicaRow
	for _, k := range ks {
		switch {
		case k.Relock:
			rows = append(rows, replicaRow{k, syncOn}, replicaRow{k, syncOff})
		case peer == nil:
			peer = []replicaRow{{k, syncPeer}}
		}
	}
	return append(rows, peer...)
}

// replicaWithin bounds the wait for the master to count a new replica in
// WAIT, and to drop a stopped one.
const replicaWithin = 15 * time.Second

// runReplicaSync runs scenario (r), printing a line per row: it attaches a
// replica to the benchmark's server, measures replicaRows(ks) as scenario
// (a) does, and stops the replica, leaving the server with none. With
// -redis every row is skipped; when the replica cannot be attached every
// row fails with that error.
func (e *env) runReplicaSync(ks []kind) []replicaResult {
	rows := replicaRows(ks)
	if len(rows) == 0 {
		return nil
	}
	var skip string
	var err error
	if e.srv == nil {
		skip = "needs the redis-server the benchmark starts itself, to attach a replica to: run without -redis"
	} else {
		var replica *server
		if replica, err = e.attachReplica(); err == nil {
			defer e.detachReplica(replica)
		}
	}
	out := make([]replicaResult, len(rows))
	for i, row := range rows {
		out[i] = replicaResult{uncontendedResult: uncontendedResult{Kind: row.k.ID, Err: errText(err)}, Sync: row.sync, Skipped: skip}
		switch {
		case skip != "":
			e.progress("replica sync %-20s %-4s skipped: %s", row.k.ID, row.sync, skip)
		case err != nil:
			e.progress("replica sync %-20s %-4s%s", row.k.ID, row.sync, errSuffix(err))
		}
	}
	if skip != "" || err != nil {
		return out
	}
	us := make([]uncontendedRow, len(rows))
	for i, row := range rows {
		us[i] = uncontendedRow{k: row.k, o: openOpts{syncOff: row.sync == syncOff}}
	}
	e.runUncontended(us, func(i int) {
		row, x := rows[i], &us[i]
		e.progress("replica sync %-20s %-4s Lock+Unlock p50 %6.1fus p99 %6.1fus  (%.2fx two PINGs)  cmds/op %.2f  WAITs/op %.2f%s",
			row.k.ID, row.sync, x.res.LockUnlock.P50, x.res.LockUnlock.P99, x.res.Ratio, x.res.CmdsPerOp, x.res.Waits, errSuffix(x.err))
	})
	for i := range out {
		out[i].uncontendedResult = us[i].res
	}
	return out
}

// attachReplica starts a replica of the benchmark's server and waits
// until a WAIT on the server counts it. On failure it leaves no replica.
func (e *env) attachReplica() (*server, error) {
	ctx := context.Background()
	// A diskless sync otherwise waits 5 s for more replicas to share it.
	if err := e.admin.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return nil, fmt.Errorf("CONFIG SET repl-diskless-sync-delay 0: %w", err)
	}
	replica, err := e.srv.startReplica()
	if err != nil {
		return nil, err
	}
	// The master counts a replica in WAIT once it has acknowledged an
	// offset, up to a second after the sync; WAIT counts the replicas
	// that have its own connection's last write, so SET and WAIT are
	// pipelined on one.
	key := e.name("replica-ready")
	for deadline := time.Now().Add(replicaWithin); ; {
		pipe := e.admin.Pipeline()
		pipe.Set(ctx, key, "1", time.Minute)
		wait := pipe.Do(ctx, "wait", 1, 100)
		_, err = pipe.Exec(ctx)
		var n int64
		if err == nil {
			n, err = wait.Int64()
		}
		if n == 1 {
			return replica, nil
		}
		if time.Now().After(deadline) {
			e.detachReplica(replica)
			if err == nil {
				err = fmt.Errorf("WAIT 1 answered %d", n)
			}
			return nil, fmt.Errorf("replica at %s not counted by WAIT on the master within %v: %w", replica.addr, replicaWithin, err)
		}
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// detachReplica stops replica and waits until the master no longer
// reports it (INFO replication), warning when it still does.
func (e *env) detachReplica(replica *server) {
	replica.stop()
	ctx := context.Background()
	var slaves string
	for deadline := time.Now().Add(replicaWithin); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		info, err := e.admin.Info(ctx, "replication").Result()
		if slaves = infoFields(info)["connected_slaves"]; err == nil && slaves == "0" {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "warning: the master still reports connected_slaves:%s %v after its replica stopped\n", slaves, replicaWithin)
}
