/*! mailassay widget: validates <input type="email"> fields as people type.
 *
 * <script src="https://validate.example.com/widget.js"
 *         data-key="svc_live_…" (a key restricted with allowedDomains)
 *         data-selector="input[type=email]" (optional)
 *         async></script>
 *
 * No dependencies. The key must be domain-restricted: the service refuses
 * unrestricted keys on the widget endpoint, so a page never carries a key
 * that works from anywhere else.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var key = script.getAttribute("data-key") || "";
  var selector = script.getAttribute("data-selector") || "input[type=email]";
  var endpoint =
    script.getAttribute("data-endpoint") || new URL(script.src).origin;
  var debounceMs = parseInt(script.getAttribute("data-debounce") || "400", 10);

  function deviceId() {
    var name = "mailassay_device";
    var id = null;
    try {
      id = window.localStorage.getItem(name);
    } catch (e) {}
    if (!id) {
      var bytes = new Uint8Array(16);
      window.crypto.getRandomValues(bytes);
      id = Array.prototype.map
        .call(bytes, function (b) {
          return ("0" + b.toString(16)).slice(-2);
        })
        .join("");
      try {
        window.localStorage.setItem(name, id);
      } catch (e) {}
    }
    document.cookie =
      name + "=" + id + "; path=/; max-age=31536000; SameSite=Lax";
    return id;
  }

  var device = deviceId();

  function messageFor(input) {
    var el = input.nextElementSibling;
    if (!el || !el.classList || !el.classList.contains("mailassay-message")) {
      el = document.createElement("div");
      el.className = "mailassay-message";
      el.setAttribute("role", "status");
      el.setAttribute("aria-live", "polite");
      el.style.fontSize = "0.85em";
      el.style.marginTop = "0.25em";
      input.insertAdjacentElement("afterend", el);
    }
    return el;
  }

  function show(input, result) {
    var el = messageFor(input);
    el.textContent = "";
    el.setAttribute("data-status", result.status || "");
    var text;
    if (result.suggestions && result.suggestions.length) {
      var suggestion = result.suggestions[0];
      el.appendChild(document.createTextNode("Did you mean "));
      var link = document.createElement("a");
      link.href = "#";
      link.className = "mailassay-suggestion";
      link.textContent = suggestion;
      link.addEventListener("click", function (ev) {
        ev.preventDefault();
        input.value = suggestion;
        input.dispatchEvent(new Event("change", { bubbles: true }));
        check(input);
      });
      el.appendChild(link);
      el.appendChild(document.createTextNode("?"));
      el.style.color = "#8a6d00";
      return;
    }
    if (result.status === "invalid") {
      text = "This email address does not look valid.";
      el.style.color = "#b00020";
    } else if (result.status === "risky") {
      text = "Please double-check this email address.";
      el.style.color = "#8a6d00";
    } else if (result.status === "valid") {
      text = "\u2713";
      el.style.color = "#1b7f3b";
    } else {
      text = "";
    }
    el.textContent = text;
    input.setAttribute(
      "aria-invalid",
      result.status === "invalid" ? "true" : "false"
    );
  }

  var pending = new WeakMap();

  function check(input) {
    var email = input.value.trim();
    if (!email) {
      messageFor(input).textContent = "";
      return;
    }
    var seq = (pending.get(input) || 0) + 1;
    pending.set(input, seq);
    fetch(endpoint + "/v2/widget/validate", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: "Bearer " + key,
        "X-Device-Id": device,
      },
      body: JSON.stringify({ email: email }),
    })
      .then(function (r) {
        return r.json();
      })
      .then(function (result) {
        if (pending.get(input) === seq && result && result.status)
          show(input, result);
      })
      .catch(function () {
        /* the form keeps working without the widget */
      });
  }

  function attach(input) {
    if (input.getAttribute("data-mailassay")) return;
    input.setAttribute("data-mailassay", "1");
    var timer = null;
    input.addEventListener("blur", function () {
      clearTimeout(timer);
      check(input);
    });
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        check(input);
      }, debounceMs);
    });
  }

  function scan() {
    var inputs = document.querySelectorAll(selector);
    for (var i = 0; i < inputs.length; i++) attach(inputs[i]);
  }

  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", scan);
  else scan();
})();
