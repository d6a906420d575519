package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// demo starts the cloud and cnsd, prints what to try and waits for ctx.
func demo(ctx context.Context, o options, stdout io.Writer) error {
	dir, cleanup, err := workDir(o.dir)
	if err != nil {
		return err
	}
	defer cleanup()
	cloudURL := "http://127.0.0.1:" + strconv.Itoa(o.cloudPort)
	cloud, err := start(ctx, dir, "mockcloud", filepath.Join(o.bin, "mockcloud"), "-listen", "127.0.0.1:"+strconv.Itoa(o.cloudPort),
		"-generate", o.generate, "-ufds", "127.0.0.1:"+strconv.Itoa(o.ldapPort))
	if err != nil {
		return err
	}
	defer cloud.stop()
	if err := waitHTTP(ctx, cloudURL+"/_mock/fixture", cloud); err != nil {
		return err
	}
	var f fixture
	if err := getJSON(ctx, cloudURL+"/_mock/fixture", "", &f); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "cnsd.json")
	if err := os.WriteFile(cfgPath, []byte(config(o, dir, cloudURL, f)), 0o644); err != nil {
		return err
	}
	cnsd, err := start(ctx, dir, "cnsd", filepath.Join(o.bin, "cnsd"), "-config", cfgPath)
	if err != nil {
		return err
	}
	defer cnsd.stop()
	apiURL := "http://127.0.0.1:" + strconv.Itoa(o.apiPort)
	if err := waitHTTP(ctx, apiURL+"/ping", cnsd); err != nil {
		return err
	}
	// cnsd created its API token beside the store before it answered.
	token, err := os.ReadFile(filepath.Join(dir, "api.token"))
	if err != nil {
		return fmt.Errorf("cnsd's API token: %w", err)
	}
	a := apiAccess{url: apiURL, token: strings.TrimSpace(string(token)), config: cfgPath, tokenFile: filepath.Join(dir, "api.token")}
	try, err := suggestions(ctx, o, a, cloudURL, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cnsd is running: DNS on 127.0.0.1:%d, API on %s, over a simulated cloud on %s\n"+
		"(UFDS on ldap://127.0.0.1:%d). Configuration and logs: %s\n\nTry:\n", o.dnsPort, apiURL, cloudURL, o.ldapPort, dir)
	for _, line := range try {
		fmt.Fprintln(stdout, "    "+line)
	}
	fmt.Fprintln(stdout, "\nCtrl-C stops cnsd and the simulated cloud.")
	if o.ready != nil {
		o.ready(try)
	}
	select {
	case <-ctx.Done():
		return nil
	case <-cloud.done:
		return fmt.Errorf("mockcloud stopped: see %s", cloud.logPath)
	case <-cnsd.done:
		return fmt.Errorf("cnsd stopped: see %s", cnsd.logPath)
	}
}

func workDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "cnsd-demo-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// process is one program the demo started, with its output in a log file.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
}

func start(ctx context.Context, dir, name, prog string, args ...string) (*process, error) {
	if _, err := os.Stat(prog); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make build` first)", prog, err)
	}
	logPath := filepath.Join(dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", prog, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

// stop asks the program to end and waits for it, killing it after 10 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitHTTP waits until url answers 200, the program p ends, or 30 s pass.
func waitHTTP(ctx context.Context, url string, p *process) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s ended before %s answered; its log:\n%s", filepath.Base(p.cmd.Path), url, tail(p.logPath))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer after 30 s; log %s", url, p.logPath)
		}
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-20, 0):], "\n")
}

// apiAccess is how the demo and the commands it prints reach cnsd's API.
type apiAccess struct {
	url, token        string
	config, tokenFile string // cnsadm -config finds the token file through it
}

// getJSON gets url (presenting token when it is not empty) and decodes
// the answer into v.
func getJSON(ctx context.Context, url, token string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

var errNoExample = errors.New("no running VM with a service and a CNS-enabled owner in the generated cloud")
