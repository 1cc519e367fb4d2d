/*
 * The site's search from disk (build/site/index.html opened as a file://, as the README says).
 *
 * The Material theme searches in a web worker, and Chromium starts no worker from a file:// page. On such a page
 * this replaces `Worker` (before the theme's bundle starts) with one that runs the worker's script in a hidden
 * same-origin iframe: messages to it are dispatched there as `message` events, and its `postMessage` calls come
 * back as this object's `message` events — what the theme's search worker needs (it checks for `IFrameWorker`, as
 * for Material's own shim). The search index comes as a script, search/search_index.js, which docs/hooks.py writes
 * after the build (the theme loads it instead of fetching the JSON on file://). Nothing is fetched from outside the
 * site. Served over HTTP the page keeps the browser's own Worker.
 */
(function () {
  "use strict";
  if (location.protocol !== "file:" || "IFrameWorker" in window) return;

  class IFrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this.pending = [];
      this.frame = document.createElement("iframe");
      this.frame.hidden = true;
      this.frame.setAttribute("aria-hidden", "true");
      this.frame.setAttribute("tabindex", "-1");
      (document.body || document.documentElement).appendChild(this.frame);
      const scope = this.frame.contentWindow;
      const worker = this;
      scope.postMessage = function (data) {
        const event = new MessageEvent("message", { data: data });
        worker.dispatchEvent(event);
        if (typeof worker.onmessage === "function") worker.onmessage(event);
      };
      scope.importScripts = function () {
        throw new Error("importScripts is not available to a worker started from file://");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, document.baseURI).href;
      script.onload = function () {
        worker.ready = true;
        worker.pending.splice(0).forEach(function (data) { worker.deliver(data); });
      };
      script.onerror = function () {
        const event = new ErrorEvent("error", { message: "cannot load the worker script " + script.src });
        worker.dispatchEvent(event);
        if (typeof worker.onerror === "function") worker.onerror(event);
      };
      scope.document.head.appendChild(script);
    }

    deliver(data) {
      const scope = this.frame.contentWindow;
      setTimeout(function () { scope.dispatchEvent(new scope.MessageEvent("message", { data: data })); }, 0);
    }

    postMessage(data) {
      if (this.ready) this.deliver(data);
      else this.pending.push(data);
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.IFrameWorker = IFrameWorker;
  window.Worker = IFrameWorker;
})();
