package tablediff

import "github.com/dynops/dynops/internal/engine"

// KeyShard is the shard of a key (its canonical JSON, as a keys file holds
// it) among n: the diff's bucket hash (FNV-1a) modulo n.
func KeyShard(key []byte, n int) int { return bucketOf(key, n) }

// OfShard wraps fn so that it sees only the keys of shard sh (KeyShard);
// with no shard (Count <= 1) it sees every key. The commands that write
// from a keys file (pitr repair --shard I/N) read it through this.
func OfShard(sh engine.Shard, fn func(KeyRecord) error) func(KeyRecord) error {
	if sh.Count <= 1 {
		return fn
	}
	return func(r KeyRecord) error {
		if KeyShard(r.Key, sh.Count) != sh.Index {
			return nil
		}
		return fn(r)
	}
}
