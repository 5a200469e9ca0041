# workerd (Cloudflare's Workers runtime), as runtimes.test.ts starts it: one worker, without
# nodejs_compat, whose modules are the built package (dist/), the smoke suite and the entry
# (workerd-worker.js). It listens on 127.0.0.1 at a port the harness learns through
# --control-fd, and may fetch only loopback addresses: the harness's test server.
#
# A worker's config names every module it may import, and the chunks the entries of dist/ share
# have content-hashed names: the harness runs a copy of this file, written into a temporary
# folder, with one module line per other file of dist/ (dist/fetch.js, dist/google.js, the
# chunks) added after the line of dist/index.js, and the embedded paths made relative to it.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .smokeWorker),
    # The worker's fetch() goes out through this service: loopback only ("local"), no internet.
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const smokeWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "workerd-worker.js"),
    (name = "smoke.js", esModule = embed "smoke.js"),
    (name = "dist/index.js", esModule = embed "../../dist/index.js"),
  ],
  compatibilityDate = "2026-11-01",
  globalOutbound = "loopback",
);
