/*
 * reference.js runs Triton CNS's own record generation over VMs given as
 * JSON lines on stdin, for zonegen's TestTritonCNSAgrees:
 *
 *     TRITON_CNS_DIR=/path/to/triton-cns node reference.js
 *
 * Each input line is {"config": <its config's forward_zones, use_alias,
 * use_login>, "vm": <a VM as its UFDS and NAPI stages leave it: owner
 * object, NICs with their network object and network_pools>, "server":
 * <the VM's compute node as CNAPI gives it>}. The server is cut as its
 * CNFilter cuts it (cutServerObj: whether it is down), and the VM goes
 * through the checkout's NetFilter and FlagFilter transforms and, when
 * they list it at all, buildZonesFromVm, as its UpdateStream does. Each output line is
 * {"listInstance", "listServices", "reasons", "zones": {zone: {name:
 * [[type, args...], ...]}}}, or {"error"} when Triton CNS threw.
 *
 * The packages those files require come from NODE_PATH (the test points
 * it at node_modules here: npm ci, or make tritoncns).
 */
'use strict';

var path = require('path');
var readline = require('readline');

var bunyan = require('bunyan');

var dir = process.env.TRITON_CNS_DIR;
var CNFilter = require(path.join(dir, 'lib', 'cn-filter.js'));
var NetFilter = require(path.join(dir, 'lib', 'net-filter.js'));
var FlagFilter = require(path.join(dir, 'lib', 'flag-filter.js'));
var buildZonesFromVm = require(path.join(dir, 'lib', 'vm-to-zones.js'));

var log = bunyan.createLogger({ name: 'reference', level: 'fatal' });

// through runs one transform stream's _transform on vm and returns what
// it pushed.
function through(stage, vm) {
    var out = null;
    stage.push = function (v) { out = v; };
    stage._transform(vm, null, function () {});
    return out;
}

function generate(input) {
    var vm = input.vm;
    vm.server = CNFilter.cutServerObj(input.server);
    vm = through(new NetFilter({ log: log, config: input.config }), vm);
    vm = through(new FlagFilter({ log: log }), vm);
    var zones = {};
    if (vm.listInstance || vm.listServices) {
        zones = buildZonesFromVm(vm, input.config, log);
    }
    var out = {
        listInstance: vm.listInstance,
        listServices: vm.listServices,
        reasons: vm.reasons,
        zones: {}
    };
    Object.keys(zones).forEach(function (z) {
        out.zones[z] = {};
        Object.keys(zones[z]).forEach(function (name) {
            out.zones[z][name] = zones[z][name].map(function (r) {
                return [r.constructor].concat(r.args);
            });
        });
    });
    return out;
}

readline.createInterface({ input: process.stdin }).on('line', function (line) {
    var out;
    try {
        out = generate(JSON.parse(line));
    } catch (err) {
        out = { error: String(err.stack || err) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
});
