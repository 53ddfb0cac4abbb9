package engine

import "testing"

func TestShardFrom(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name  string
		flag  string
		count int
		env   map[string]string
		want  Shard
		fails bool
	}{
		{name: "flag", flag: "1/4", want: Shard{1, 4}},
		{name: "flag wins over the engine", flag: "2/3", count: 8, env: map[string]string{EnvBatchIndex: "5"}, want: Shard{2, 3}},
		{name: "batch", count: 4, env: map[string]string{EnvBatchIndex: "3"}, want: Shard{3, 4}},
		{name: "kubernetes", count: 2, env: map[string]string{EnvK8sIndex: "0"}, want: Shard{0, 2}},
		{name: "index outside count", count: 2, env: map[string]string{EnvBatchIndex: "2"}, fails: true},
		{name: "no count", env: map[string]string{EnvK8sIndex: "0"}, fails: true},
		{name: "nothing", fails: true},
		{name: "flag index too big", flag: "4/4", fails: true},
		{name: "flag not a shard", flag: "x", fails: true},
		{name: "flag zero count", flag: "0/0", fails: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ShardFrom(c.flag, c.count, env(c.env))
			if c.fails {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
