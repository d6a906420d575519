package main

import (
	"bufio"
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

	"github.com/cnsd/cnsd/subproc"
)

// demo checks the ports, starts the cloud and cnsd, checks that they serve
// the ports it prints, prints what to try and waits for ctx.
func demo(ctx context.Context, o options, stdout io.Writer) error {
	dnsUDP := port{"DNS", "udp", o.dnsPort, "dns-port"}
	dnsTCP := port{"DNS", "tcp", o.dnsPort, "dns-port"}
	api := port{"API", "tcp", o.apiPort, "api-port"}
	if err := checkFree([]port{dnsUDP, dnsTCP, api}); err != nil {
		return err
	}
	dir, err := workDir(o.dir)
	if err != nil {
		return err
	}
	logs := filepath.Join(dir, "logs")
	cloud, err := start(logs, "mockcloud", filepath.Join(o.bin, "mockcloud"),
		"-listen", "127.0.0.1:"+strconv.Itoa(o.cloudPort), "-generate", o.generate, "-ufds", "127.0.0.1:"+strconv.Itoa(o.ldapPort))
	if err != nil {
		return err
	}
	defer cloud.stop()
	cloudURL, ldapURL, err := cloudAddrs(ctx, cloud)
	if err != nil {
		return err
	}
	var f fixture
	if err := getJSON(ctx, cloudURL+"/_mock/fixture", "", &f); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "cnsd.json")
	if err := os.WriteFile(cfgPath, []byte(config(o, dir, cloudURL, ldapURL, f)), 0o644); err != nil {
		return err
	}
	cnsd, err := start(logs, "cnsd", filepath.Join(o.bin, "cnsd"), "-config", cfgPath)
	if err != nil {
		return err
	}
	defer cnsd.stop()
	apiURL := "http://127.0.0.1:" + strconv.Itoa(o.apiPort)
	if err := waitHTTP(ctx, apiURL+"/ping", cnsd); err != nil {
		return inUse(err, cnsd, dnsUDP, dnsTCP, api)
	}
	// cnsd created its API token beside its configuration before it answered.
	tokenFile := filepath.Join(dir, "api.token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return fmt.Errorf("cnsd's API token: %w", err)
	}
	a := apiAccess{url: apiURL, token: strings.TrimSpace(string(token)), config: cfgPath, tokenFile: tokenFile}
	vm, names, err := published(ctx, a, f)
	if err != nil {
		return err
	}
	if err := serving(o, cnsd, cloud, cloudURL, ldapURL, dnsUDP, dnsTCP, api); err != nil {
		return err
	}
	tools := available()
	try := suggestions(o, a, cloudURL, vm, names, tools)
	fmt.Fprintf(stdout, "cnsd is running: DNS on 127.0.0.1:%d, API on %s, over a simulated cloud on %s\n"+
		"(UFDS on %s). Configuration: %s; logs: %s (kept after exit).\n\nTry:\n",
		o.dnsPort, apiURL, cloudURL, ldapURL, shown(cfgPath), shown(logs))
	for _, line := range try {
		fmt.Fprintln(stdout, "    "+line)
	}
	for _, m := range tools.missing() {
		fmt.Fprintln(stdout, "\n"+m)
	}
	fmt.Fprintln(stdout, "\nCtrl-C stops cnsd and the simulated cloud.")
	if o.ready != nil {
		o.ready(try)
	}
	select {
	case <-ctx.Done():
		cnsd.stop()
		cloud.stop()
		fmt.Fprintf(stdout, "stopped; the logs are in %s\n", shown(logs))
		return nil
	case <-cloud.done:
		return fmt.Errorf("mockcloud stopped: see %s", cloud.logPath)
	case <-cnsd.done:
		return fmt.Errorf("cnsd stopped: see %s", cnsd.logPath)
	}
}

// workDir makes dir (absolute) with its logs directory, and removes the
// store and configuration of an earlier run: each run starts from an
// empty store. The API token is kept, so that lines copied from an
// earlier run still work.
func workDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "cnsd.db*"))
	for _, path := range append(old, filepath.Join(dir, "cnsd.json")) {
		if err := os.RemoveAll(path); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// shown is path as the printed lines give it: relative to the working
// directory when under it, absolute otherwise.
func shown(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// process is one program the demo started, with its output in a log file.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
}

// start runs prog in its own process group, so that a Ctrl-C reaches the
// demo only and the demo stops its programs in order.
func start(logs, name, prog string, args ...string) (*process, error) {
	if _, err := os.Stat(prog); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make build` first)", prog, err)
	}
	logPath := filepath.Join(logs, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = subproc.Attr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", prog, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

// stop asks the program to end and waits for it, killing it after 10 s.
// Stopping a stopped program does nothing.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// ended is the error for a program that ended while the demo waited for it.
func (p *process) ended(what string) error {
	return fmt.Errorf("%s ended before %s; its log %s ends:\n%s", filepath.Base(p.cmd.Path), what, p.logPath, tail(p.logPath))
}

// cloudAddrs reads the addresses mockcloud chose from its output: the
// HTTP APIs' and slapd's.
func cloudAddrs(ctx context.Context, cloud *process) (httpURL, ldapURL string, err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		httpURL, ldapURL = scanAddrs(cloud.logPath)
		if httpURL != "" && ldapURL != "" {
			return httpURL, ldapURL, waitHTTP(ctx, httpURL+"/_mock/fixture", cloud)
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-cloud.done:
			return "", "", cloud.ended("it printed its addresses")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("mockcloud printed no addresses in 30 s; see %s", cloud.logPath)
		}
	}
}

// scanAddrs finds mockcloud's "VMAPI http://…/vms" and "UFDS ldap://…" lines.
func scanAddrs(logPath string) (httpURL, ldapURL string) {
	f, err := os.Open(logPath)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 2 && fields[0] == "VMAPI":
			httpURL = strings.TrimSuffix(fields[1], "/vms")
		case len(fields) >= 2 && fields[0] == "UFDS":
			ldapURL = fields[1]
		}
	}
	return httpURL, ldapURL
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
			return p.ended(url + " answered")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer after 30 s; log %s", url, p.logPath)
		}
	}
}

// inUse turns cnsd's failure to bind one of ports, which another process
// took after checkFree, into the error naming the port and its holder.
func inUse(err error, p *process, ports ...port) error {
	log, _ := os.ReadFile(p.logPath)
	if !strings.Contains(string(log), "address already in use") {
		return err
	}
	for _, pt := range ports {
		if checkFree([]port{pt}) != nil {
			hs, found := holders(pt)
			return fmt.Errorf("cnsd could not bind %s: it is held by %s; see %s", pt, describe(hs, found), p.logPath)
		}
	}
	return err
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
