package faults

import "sync"

// Interleave starts a proxy in front of backend that runs other once, just
// before it forwards the first request of op: another writer acting
// between dynops's read and its write (e.g. op "PutItem"), on the real
// emulator, through dynops's own code path. Nothing else is changed.
func Interleave(backend, op string, other func()) (*Proxy, error) {
	var once sync.Once
	return Start(backend, Config{Observe: func(_ int, seen string) {
		if seen == op {
			once.Do(other)
		}
	}})
}
