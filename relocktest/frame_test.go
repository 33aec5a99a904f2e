package relocktest

import (
	"errors"
	"io"
	"net"
	"testing"
)

// The frame parser decides what the go-redis reader sees, so it is
// tested on its own: it has no exported surface to test through.
func TestFrameLen(t *testing.T) {
	for _, tc := range []struct {
		frame string
		n     int
		err   error
	}{
		{"+OK\r\n", 5, nil},
		{":12\r\n", 5, nil},
		{"_\r\n", 3, nil},
		{"$3\r\nabc\r\n", 9, nil},
		{"$-1\r\n", 5, nil},
		{"*-1\r\n", 5, nil},
		{"*2\r\n$1\r\na\r\n:1\r\n", 15, nil},
		{"%1\r\n+k\r\n+v\r\n", 12, nil},
		{">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n0\r\n", 31, nil},
		{"$3\r\nabcd\r\n", 0, errFrame},
		{"$3\r\nab", 0, errShort},
		{"*2\r\n:1\r\n", 0, errShort},
		{"+OK", 0, errShort},
		{"?x\r\n", 0, errFrame},
		{"$x\r\n", 0, errFrame},
	} {
		n, err := frameLen([]byte(tc.frame))
		if n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("frameLen(%q) = %d, %v; want %d, %v", tc.frame, n, err, tc.n, tc.err)
		}
	}
}

// A conn drops the messages DropWakeups asks for and passes the rest on
// intact, however the bytes are split across reads.
func TestConnDrops(t *testing.T) {
	const (
		reply   = "+OK\r\n"
		wake    = ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n0\r\n"
		notice  = ">3\r\n$7\r\nmessage\r\n$17\r\nrelock_client:{x}\r\n$1\r\nn\r\n"
		confirm = ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n"
	)
	server, client := net.Pipe()
	f := &faults{drop: 1}
	c := &conn{Conn: client, f: f}
	sent := reply + notice + wake + confirm + wake
	go func() {
		for i := range len(sent) {
			if _, err := server.Write([]byte{sent[i]}); err != nil {
				return
			}
		}
		server.Close()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := reply + notice + confirm + wake; string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	if f.done.Dropped != 1 {
		t.Fatalf("dropped %d, want 1", f.done.Dropped)
	}
}
