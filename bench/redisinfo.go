package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A snapshot is what the benchmark reads from the server before and after
// a measurement: calls per command (INFO commandstats), the server's CPU
// time (INFO cpu) and its connected clients (INFO clients).
type snapshot struct {
	calls   map[string]int64
	cpuUs   float64
	clients int64
}

func takeSnapshot(ctx context.Context, rdb *redis.Client) (snapshot, error) {
	info, err := rdb.Info(ctx, "commandstats", "cpu", "clients").Result()
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{calls: map[string]int64{}}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if name, rest, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(name, "cmdstat_") {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					s.calls[strings.TrimPrefix(name, "cmdstat_")] = n
				}
			}
		}
	}
	f := infoFields(info)
	sys, _ := strconv.ParseFloat(f["used_cpu_sys"], 64)
	user, _ := strconv.ParseFloat(f["used_cpu_user"], 64)
	s.cpuUs = (sys + user) * 1e6
	s.clients, _ = strconv.ParseInt(f["connected_clients"], 10, 64)
	return s, nil
}

// A delta is the difference of two snapshots, less the INFO call that
// took the second one.
type delta struct {
	calls map[string]int64
	cpuUs float64
}

func (b snapshot) to(a snapshot) delta {
	d := delta{calls: map[string]int64{}, cpuUs: a.cpuUs - b.cpuUs}
	for k, v := range a.calls {
		if n := v - b.calls[k]; n > 0 {
			d.calls[k] = n
		}
	}
	if d.calls["info"] > 0 {
		d.calls["info"]--
	}
	return d
}

// all is every command the server ran, including those run inside Lua
// scripts.
func (d delta) all() int64 {
	var n int64
	for _, v := range d.calls {
		n += v
	}
	return n
}

// sent counts the commands clients sent (each EVAL/EVALSHA once, not the
// commands its script ran): every command except those named in inner,
// the commands a lock implementation's scripts run and its client never
// sends itself.
func (d delta) sent(inner map[string]bool) int64 {
	var n int64
	for k, v := range d.calls {
		if !inner[k] {
			n += v
		}
	}
	return n
}

func infoFields(info string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// A conn is one line of CLIENT LIST.
type conn map[string]string

func clientList(ctx context.Context, rdb *redis.Client) ([]conn, error) {
	out, err := rdb.ClientList(ctx).Result()
	if err != nil {
		return nil, err
	}
	var list []conn
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		c := conn{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			c[k] = v
		}
		list = append(list, c)
	}
	return list, nil
}

// subscribed reports whether c holds subscriptions or client-side
// caching (tracking) invalidations: the connections waiters listen on.
func (c conn) listening() bool {
	for _, k := range []string{"sub", "psub", "ssub"} {
		if v, ok := c[k]; ok && v != "0" {
			return true
		}
	}
	return strings.Contains(c["flags"], "t")
}
