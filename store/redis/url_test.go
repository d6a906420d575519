package redis

import (
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
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
		{"sentinel master password redacted", "redis://s1:26379?master_name=cnsd&password=secret&bogus=1", false, "password=xxxxx"},
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
			if _, ok := c.(*goredis.ClusterClient); ok != tt.cluster {
				t.Errorf("newRedisClient(%q) is %T, cluster %v", tt.url, c, tt.cluster)
			}
		})
	}
}

func TestRedisURLTimeouts(t *testing.T) {
	tests := []struct {
		url         string
		read, write time.Duration
	}{
		{"redis://127.0.0.1:6379", DefaultIOTimeout, DefaultIOTimeout},
		{"redis://127.0.0.1:6379?read_timeout=5s", 5 * time.Second, DefaultIOTimeout},
		{"redis://127.0.0.1:6379?write_timeout=2s&read_timeout=1s", time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		c, err := newRedisClient(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		o := c.(*goredis.Client).Options()
		if o.ReadTimeout != tt.read || o.WriteTimeout != tt.write {
			t.Errorf("%s: read %v write %v, want %v %v", tt.url, o.ReadTimeout, o.WriteTimeout, tt.read, tt.write)
		}
		c.Close()
	}
}
