package store

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRedisURL(t *testing.T) {
	tests := []struct {
		name, url string
		cluster   bool
		err       string // a substring of the error; "" for none
	}{
		{"single", "redis://127.0.0.1:6379/2", false, ""},
		{"tls with password", "rediss://:secret@redis.example.com:6380", false, ""},
		{"sentinel", "redis://s1:26379?master_name=cnsd&addr=s2:26379", false, ""},
		{"cluster seeds", "redis://n1:7000?addr=n2:7000&addr=n3:7000", true, ""},
		{"cluster flag", "redis://n1:7000?cluster=true", true, ""},
		{"cluster false", "redis://n1:7000?cluster=false", false, `cluster="false"`},
		{"unknown parameter", "redis://127.0.0.1:6379?bogus=1", false, "bogus"},
		{"bad scheme", "http://127.0.0.1:6379", false, "scheme"},
		{"password redacted", "redis://:secret@127.0.0.1:6379?bogus=1", false, "xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newRedisClient(tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("newRedisClient(%q) error %v, want one containing %q", tt.url, err, tt.err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("newRedisClient(%q): %v", tt.url, err)
			}
			defer c.Close()
			if _, ok := c.(*redis.ClusterClient); ok != tt.cluster {
				t.Errorf("newRedisClient(%q) is %T, cluster %v", tt.url, c, tt.cluster)
			}
		})
	}
}
