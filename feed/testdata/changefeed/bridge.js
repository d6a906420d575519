/*
 * bridge.js puts the real changefeed library (node-sdc-changefeed, the
 * one VMAPI publishes with) between the simulated cloud and cnsd's feed:
 *
 *     node bridge.js UPSTREAM_URL [PORT]
 *
 * A changefeed Listener of the library follows UPSTREAM_URL's changefeed
 * (the simulated cloud's publisher) for the resources its GET /changefeeds
 * names; each item it reads is published again by a Publisher of the
 * library, on a restify 4 server (VMAPI's) of its own, through the
 * Publisher's moray bucket, here kept in memory. Every other request is
 * passed to UPSTREAM_URL as it came, so that the bridge is one VMAPI to
 * its clients: GET /vms and GET /vms/:uuid from the cloud, the changefeed
 * from the library.
 *
 * POST /_bridge/cut drops every websocket the Publisher serves, without a
 * close frame (a network cut), and answers {"cut": n}.
 *
 * It listens on 127.0.0.1, on PORT when given (a bridge started again
 * where an earlier one was: VMAPI restarted). On stdout it prints
 * "listening HOST:PORT" once it serves and "bootstrap RESOURCE" each time
 * its Listener has registered. It exits when stdin closes (the test that
 * started it is gone).
 */
'use strict';

var mod_events = require('events');
var mod_http = require('http');
var mod_util = require('util');

var mod_bunyan = require('bunyan');
var mod_changefeed = require('changefeed');
var mod_restify = require('restify');

var upstream = new URL(process.argv[2]);
var port = process.argv[3] ? parseInt(process.argv[3], 10) : 0;
var log = mod_bunyan.createLogger({
    name: 'changefeed-bridge',
    level: process.env.BRIDGE_LOG_LEVEL || 'warn',
    stream: process.stderr
});

function copy(value) {
    return JSON.parse(JSON.stringify(value));
}

function bucketNotFound(name) {
    var err = new Error(mod_util.format('bucket %s does not exist', name));
    err.name = 'BucketNotFoundError';
    return err;
}

/*
 * MemoryMoray answers the calls a Publisher makes on its moray client
 * (getBucket, createBucket, putObject, findObjects with the two filters
 * it uses, delObject) from maps, asynchronously as moray does.
 */
function MemoryMoray() {
    mod_events.EventEmitter.call(this);
    this.buckets = new Map();
}
mod_util.inherits(MemoryMoray, mod_events.EventEmitter);

MemoryMoray.prototype.toString = function toString() {
    return '[object MemoryMoray]';
};

MemoryMoray.prototype.getBucket = function getBucket(name, cb) {
    var self = this;
    setImmediate(function () {
        if (!self.buckets.has(name)) {
            cb(bucketNotFound(name));
            return;
        }
        cb(null, { name: name });
    });
};

MemoryMoray.prototype.createBucket = function createBucket(name, cfg, cb) {
    if (!this.buckets.has(name)) {
        this.buckets.set(name, new Map());
    }
    setImmediate(cb, null);
};

MemoryMoray.prototype.putObject = function putObject(name, key, value, cb) {
    var bucket = this.buckets.get(name);
    if (!bucket) {
        setImmediate(cb, bucketNotFound(name));
        return;
    }
    bucket.set(key, copy(value));
    setImmediate(cb, null);
};

MemoryMoray.prototype.delObject = function delObject(name, key, cb) {
    var bucket = this.buckets.get(name);
    if (bucket) {
        bucket.delete(key);
    }
    setImmediate(cb, null);
};

MemoryMoray.prototype.findObjects = function findObjects(name, filter) {
    var self = this;
    var req = new mod_events.EventEmitter();
    var want;
    if (filter === '(published=no)') {
        want = function (v) { return v.published === 'no'; };
    } else if (filter === '(!(published=no))') {
        want = function (v) { return v.published !== 'no'; };
    }
    setImmediate(function () {
        var bucket = self.buckets.get(name);
        if (!bucket) {
            req.emit('error', bucketNotFound(name));
            return;
        }
        if (!want) {
            req.emit('error', new Error('MemoryMoray: unsupported filter ' +
                filter));
            return;
        }
        bucket.forEach(function (value, key) {
            if (want(value)) {
                req.emit('record', { bucket: name, key: key,
                    value: copy(value) });
            }
        });
        req.emit('end');
    });
    return req;
};

// sockets are the upgraded connections, for POST /_bridge/cut.
var sockets = new Set();

/*
 * proxy passes a request that is not the changefeed's to upstream, as it
 * came, and its answer back. It runs before restify routes and does not
 * call next for a request it answers: restify 4 would route it after a
 * pre handler's next(false) too, answer 404 on top of the answer sent,
 * and leave the keep-alive connection to hang the client's next request.
 */
function proxy(req, res, next) {
    var path = req.url.split('?')[0];
    if (path === '/changefeeds' || path.indexOf('/changefeeds/') === 0) {
        next();
        return;
    }
    if (path === '/_bridge/cut' && req.method === 'POST') {
        var n = sockets.size;
        sockets.forEach(function (socket) { socket.destroy(); });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ cut: n }));
        return;
    }
    var out = mod_http.request({
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers
    }, function (answer) {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
    });
    out.on('error', function (err) {
        log.warn(err, 'upstream request failed');
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'BadGateway', message: err.message }));
    });
    req.pipe(out);
}

function getJSON(path, cb) {
    mod_http.get({ host: upstream.hostname, port: upstream.port, path: path },
        function (res) {
        var body = '';
        res.setEncoding('utf8');
        res.on('data', function (chunk) { body += chunk; });
        res.on('end', function () {
            if (res.statusCode !== 200) {
                cb(new Error(mod_util.format('GET %s: %d %s', path,
                    res.statusCode, body)));
                return;
            }
            try {
                cb(null, JSON.parse(body));
            } catch (err) {
                cb(err);
            }
        });
    }).on('error', cb);
}

function fail(err) {
    process.stderr.write('bridge: ' + (err.stack || err) + '\n');
    process.exit(1);
}

function main(resourceMap) {
    var resources = Object.keys(resourceMap).map(function (k) {
        return resourceMap[k];
    });
    var server = mod_restify.createServer({ name: 'vmapi', log: log });
    server.pre(proxy);
    server.on('upgrade', function (req, socket) {
        sockets.add(socket);
        socket.on('close', function () { sockets.delete(socket); });
    });
    var publisher = mod_changefeed.createPublisher({
        log: log,
        maxAge: 3600,
        moray: { bucketName: 'vmapi_changefeed', client: new MemoryMoray() },
        restifyServer: server,
        resources: resources
    });
    publisher.on('moray-ready', function () {
        publisher.start();
        server.listen(port, '127.0.0.1', function () {
            var a = server.address();
            process.stdout.write(mod_util.format('listening %s:%d\n',
                a.address, a.port));
        });
    });

    resources.forEach(function (r) {
        var listener = mod_changefeed.createListener({
            log: log,
            url: upstream.origin,
            instance: 'changefeed-bridge-' + r.resource,
            service: 'changefeed-bridge',
            changeKind: { resource: r.resource,
                subResources: r.subResources },
            backoff: { minTimeout: 10, maxTimeout: 200, retries: Infinity }
        });
        listener.on('bootstrap', function () {
            process.stdout.write('bootstrap ' + r.resource + '\n');
        });
        listener.on('readable', function () {
            var item;
            while ((item = listener.read()) !== null) {
                // Published again as VMAPI publishes it; the publisher
                // stamps its own "published".
                delete item.published;
                publisher.publish(item, function (err) {
                    if (err) {
                        log.error(err, 'publish');
                    }
                });
            }
        });
        listener.on('error', function (err) {
            log.warn(err, 'listener');
        });
        listener.register();
    });
}

process.stdin.on('end', function () { process.exit(0); });
process.stdin.resume();

getJSON('/changefeeds', function (err, resourceMap) {
    if (err) {
        fail(err);
        return;
    }
    main(resourceMap);
});
