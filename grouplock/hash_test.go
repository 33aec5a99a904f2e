package grouplock_test

import (
	"strings"
	"testing"

	"github.com/relock-go/relock/grouplock"
)

// The fields below are what Redisson's own code gave for the same bytes:
// org.redisson.misc.HighwayHash (Redisson HEAD 66863978) run with
// Hash.KEY over the bytes, as Hash.hash128toBase64 does, the bytes being
// those of StringCodec (UTF-8) or of Kryo 5.6.2's writeClassAndObject of
// a String (read in Kryo's Output.writeString and writeVarIntFlag).

// TestFieldBytes pins the hash over inputs of every length class:
// shorter than a 4-byte word, word multiples, the 16-byte branch of the
// remainder, whole 32-byte packets and more than one.
func TestFieldBytes(t *testing.T) {
	for _, tc := range []struct {
		n     int
		field string
	}{
		{1, "GGdH1a44no0rjd23Ul9XXg"},
		{2, "EVRE6b2rdX75Ss37qfPajw"},
		{3, "LNeSS2+GZVoNGLa6Lh67KA"},
		{4, "XBNYBuwumJeay1jj1V4jjQ"},
		{7, "5cFQq85PmDDvTT23KLx6pw"},
		{8, "VA2C8G/CwvNaHcKf1abTjg"},
		{15, "OkJqPNMSX/ht42LNjjhFMw"},
		{16, "Fj4dtX4yeHBAZ6u2NWy5iQ"},
		{17, "E+fWrtN4vGdvsOajh/VFPw"},
		{20, "z9KCvwICHGuA1HESfGHH6g"},
		{31, "/15uXZic9mPOzzaitqr8ug"},
		{32, "bgo1eeBagzUqV3txwhbwNg"},
		{33, "7/3k0t4ZK3iDRHM60ZPzdQ"},
		{63, "6hxcD9GPLQ2VkexEU7rwjQ"},
		{64, "GVshLaEbOMuPoe58h2PPJA"},
		{70, "GRWN1KbTguWjHD4ESmLFSA"},
	} {
		b := make([]byte, tc.n)
		for i := range b {
			b[i] = byte(i*7 + tc.n)
		}
		if got := grouplock.StringCodec.Field(string(b)); got != tc.field {
			t.Errorf("%d bytes: field %q, want %q", tc.n, got, tc.field)
		}
	}
}

// TestFieldCodecs pins values under both codecs: Kryo's ASCII form (2 to
// 32 characters), its length-prefixed form for one character, for more
// than 32 and for non-ASCII text (two- and three-byte units, a surrogate
// pair written as two units), and a length that takes a second varint
// byte.
func TestFieldCodecs(t *testing.T) {
	for _, tc := range []struct {
		value        string
		str, kryo    string
		kryoEncoding string // the bytes hashed, in hex, for the record
	}{
		{"Jack_001", "7pNoDdizVy2xY792MaFv+w", "DScHoUUqdQJ9J7Ux220rcQ", "034a61636b5f3030b1"},
		{"Mary_002", "kIX2DFOX4IWct7G7K6tV9A", "+ZZbsYCpCEvhG9irFt/3NQ", "034d6172795f3030b2"},
		{"a", "qwvAS12pR0CgRitaypEjUw", "Jon6GCcO+0QSJkhre5wXYA", "038261"},
		{"ab", "qIx8Ray65QDI9s9SyboNig", "iFSOY3KcP2BLEBRRjSOm8w", "0361e2"},
		{strings.Repeat("y", 32), "D5t0Nw3TudisvM9Rew7TOg", "4uKCgXOf0ukbQl6Wgkwd5Q", "03 'y'x31 f9"},
		{strings.Repeat("z", 33), "NCjzFDCHX4slm5267ryuhA", "L8NqyoZeVN6yO15khcStEg", "03a2 'z'x33"},
		{"Zoë", "Pykx11kquang/juawbnkow", "hY2MnbfnfwVXIgzK0RcpUw", "03845a6fc3ab"},
		{"日本語", "4PLJx8KOCYUcHV8bTDfq4g", "vUBKyryx/0Di4fMPuWRWMA", "0384e697a5e69cace8aa9e"},
		{"😀", "BFYDo74PGvb6OkPcvcLRhw", "x8RNEAwQ8KZSMhraJs6dXA", "0383eda0bdedb880"},
		{strings.Repeat("abcdefgh", 9) + "Q", "SYXX5XQWOMUjNDt49uRRYw", "95ccS5DHo5ZRHV3Q2rmBoQ", "03ca01 ..."},
		{strings.Repeat("é", 70), "3+O4O+KS/qa1UA53eGTFwQ", "o5TnV5yXo0rTnAuaH1t1hw", "03c701 c3a9x70"},
	} {
		if got := grouplock.StringCodec.Field(tc.value); got != tc.str {
			t.Errorf("StringCodec %q: field %q, want %q", tc.value, got, tc.str)
		}
		if got := grouplock.Kryo5Codec.Field(tc.value); got != tc.kryo {
			t.Errorf("Kryo5Codec %q (%s): field %q, want %q", tc.value, tc.kryoEncoding, got, tc.kryo)
		}
	}
}
