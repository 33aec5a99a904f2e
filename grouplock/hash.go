package grouplock

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/relock-go/relock"
)

// A Codec is the encoding a Redisson client gives a value (a Java String)
// before it hashes the bytes into the value's field. Redisson encodes the
// values of getMultiLock(group, values) with its client's codec
// (Config.setCodec), so a relock client and a Redisson client exclude
// each other on a value only when both name the codec the Redisson
// client uses.
type Codec int

const (
	// Kryo5Codec is Redisson's default codec, Kryo5Codec as its no-argument
	// constructor makes it (no references): a String is written as
	// Kryo's class id for String (1, written as 3) and then Kryo's string:
	// 2 to 32 ASCII characters as their bytes with the last one's high
	// bit set; otherwise the UTF-16 length + 1 as a varint flagged in
	// its first byte's high bit, then each UTF-16 unit in 1 to 3 bytes.
	// A Kryo5Codec made with references on writes more, and is not
	// matched.
	Kryo5Codec Codec = iota
	// StringCodec is Redisson's StringCodec: the value's UTF-8 bytes.
	StringCodec
)

// String returns the name of the Redisson codec c matches.
func (c Codec) String() string {
	switch c {
	case Kryo5Codec:
		return "Kryo5Codec"
	case StringCodec:
		return "StringCodec"
	}
	return fmt.Sprintf("Codec(%d)", int(c))
}

// Field returns the hash field under which the group's hash records
// value, as a Redisson client with codec c names it: the 128-bit
// HighwayHash (Redisson's key) of the value's encoding, in standard
// base64 without its "==" padding. HGET <group> <field> reads who holds
// the value. value must be valid UTF-8, as New requires.
func (c Codec) Field(value string) string {
	var b []byte
	switch c {
	case StringCodec:
		b = []byte(value)
	default:
		b = kryo5(value)
	}
	h0, h1 := highway128(b)
	var sum [16]byte
	binary.BigEndian.PutUint64(sum[:8], h0)
	binary.BigEndian.PutUint64(sum[8:], h1)
	return base64.StdEncoding.EncodeToString(sum[:])[:22]
}

// check reports a codec New does not know, or a value no Java String
// equals.
func (c Codec) check(value string) error {
	switch {
	case c != Kryo5Codec && c != StringCodec:
		return fmt.Errorf("grouplock: unknown codec %v: %w", c, relock.ErrInvalidArgument)
	case value == "":
		return fmt.Errorf("grouplock: empty value: %w", relock.ErrInvalidArgument)
	case !utf8.ValidString(value):
		return fmt.Errorf("grouplock: value %q is not valid UTF-8: %w", value, relock.ErrInvalidArgument)
	}
	return nil
}

// kryo5 is Kryo 5's writeClassAndObject of value as a java.lang.String
// (Kryo.writeClassAndObject, Output.writeString).
func kryo5(value string) []byte {
	units := utf16.Encode([]rune(value))
	b := make([]byte, 0, 6+3*len(units))
	b = append(b, 3) // String's registration id, 1, + 2
	ascii := true
	for _, u := range units {
		if u > 127 {
			ascii = false
			break
		}
	}
	if ascii && len(units) > 1 && len(units) <= 32 {
		b = append(b, value...)
		b[len(b)-1] |= 0x80
		return b
	}
	b = appendVarIntFlag(b, uint32(len(units)+1))
	for _, u := range units {
		switch {
		case u <= 0x7f:
			b = append(b, byte(u))
		case u > 0x7ff:
			b = append(b, 0xe0|byte(u>>12&0x0f), 0x80|byte(u>>6&0x3f), 0x80|byte(u&0x3f))
		default:
			b = append(b, 0xc0|byte(u>>6&0x1f), 0x80|byte(u&0x3f))
		}
	}
	return b
}

// appendVarIntFlag is Kryo's Output.writeVarIntFlag(true, v, true): six
// bits in the first byte, whose high bit is the flag and whose next bit
// says that more follow, then seven bits a byte.
func appendVarIntFlag(b []byte, v uint32) []byte {
	first := byte(v&0x3f) | 0x80
	if v>>6 == 0 {
		return append(b, first)
	}
	b = append(b, first|0x40)
	for v >>= 6; v>>7 != 0; v >>= 7 {
		b = append(b, byte(v&0x7f)|0x80)
	}
	return append(b, byte(v))
}
