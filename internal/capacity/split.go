package capacity

import "fmt"

// Split is this budget's share for one of parts shards of a run: the run's
// units per second divided evenly, in a bucket of its own, its source
// saying so. No budget (nil Bucket) and one part are returned unchanged.
func (b Budget) Split(parts int) (Budget, error) {
	if b.Bucket == nil || parts <= 1 {
		return b, nil
	}
	share := b.UnitsPerSecond / float64(parts)
	bk, err := NewBucket(share, nil)
	if err != nil {
		return b, fmt.Errorf("%s budget on %s split across %d shards: %w", b.Kind, b.Table, parts, err)
	}
	b.Bucket, b.UnitsPerSecond = bk, share
	b.Source = fmt.Sprintf("%s, split evenly across %d shards", b.Source, parts)
	return b, nil
}
