// The changefeed package requires moray at load; bridge.js hands its
// Publisher a client of its own, so createClient is never called.
module.exports = {
    createClient: function createClient() {
        throw new Error('moray stub: give the Publisher options.moray.client');
    }
};
