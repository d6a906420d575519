// Package subproc starts the servers that tests and the simulated cloud
// run beside them (secondaries, redis-server, slapd) so that none
// outlives the process that started it.
package subproc
