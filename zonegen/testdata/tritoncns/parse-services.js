/*
 * parse-services.js parses each JSON string on stdin (one a line) with
 * triton-tags' cns-svc-tag, the triton.cns.services parser Triton CNS
 * used (lib/flag-filter.js), and writes {"services": [...]} or
 * {"error": message} a line, for zonegen's
 * TestParseServicesAgreesWithTritonTags. triton-tags comes from NODE_PATH.
 */
'use strict';

var readline = require('readline');

var svcTagParser = require('triton-tags/lib/cns-svc-tag');

readline.createInterface({ input: process.stdin }).on('line', function (line) {
    var out;
    try {
        out = { services: svcTagParser.parse(JSON.parse(line)) };
    } catch (err) {
        out = { error: String(err.message || err) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
});
