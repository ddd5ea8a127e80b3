// The codebook editor (coding/codebooks/views/editor.py): drag a question or an option by its
// handle, Alt+↑/↓ to move the one in focus, a redraw when a condition's question
// changes, conditional questions in the preview, and a warning before publishing unsaved
// changes. Without this file every action is still a button the server answers.
(function () {
  "use strict";
  const form = document.getElementById("editor-form");
  if (!form) return;
  const preview = document.getElementById("preview");
  let dirty = false;
  // The editor's words in the reader's language (coding.codebooks.views.editor.JS_STRINGS).
  const strings = JSON.parse((document.getElementById("js-strings") || {}).textContent || "{}");
  const gettext = (text) => strings[text] || text;

  // Structural actions are submit buttons named "op"; htmx sends the one clicked.
  function redraw() { document.getElementById("refresh-button").click(); }

  // A question card or an option row: the move buttons of the innermost one.
  function moveButton(item, up) {
    const tools = item.classList.contains("ocard") ? ":scope > .orow .otools" : ":scope > .qcard-head .qcard-tools";
    return item.querySelectorAll(tools + " button")[up ? 0 : 1];
  }

  // --- keyboard: Alt+↑ / Alt+↓ move the option, or else the question, being edited -------
  form.addEventListener("keydown", (event) => {
    if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
    const item = event.target.closest(".ocard, .qcard");
    if (!item) return;
    event.preventDefault();
    const button = moveButton(item, event.key === "ArrowUp");
    if (button && !button.disabled) button.click();
  });

  // --- pointer: drag a question or an option by its handle (mouse, pen and touch) ---------
  let dragged = null;
  let orderBefore = "";
  const order = () => Array.from(form.querySelectorAll("input[name=question], input[name$='-option']"))
    .map((i) => i.value).join(",");

  form.addEventListener("pointerdown", (event) => {
    const handle = event.target.closest(".drag-handle");
    if (!handle || event.button !== 0) return;
    event.preventDefault();
    dragged = handle.closest(".ocard, .qcard");
    orderBefore = order();
    dragged.classList.add("dragging");
    handle.setPointerCapture(event.pointerId);
  });
  form.addEventListener("pointermove", (event) => {
    if (!dragged) return;
    // The item under the pointer among the dragged one's siblings (options stay in their question).
    let item = document.elementFromPoint(event.clientX, event.clientY);
    while (item && item.parentNode !== dragged.parentNode) item = item.parentNode;
    if (!item || item === dragged || item.nodeType !== 1) return;
    const box = item.getBoundingClientRect();
    const after = event.clientY > box.top + box.height / 2;
    item.parentNode.insertBefore(dragged, after ? item.nextSibling : item);
  });
  // Until the redraw answers, the moved items' buttons say what they can do from their new place.
  function renumberButtons(list) {
    const items = Array.from(list.children);
    items.forEach((item, index) => {
      const up = moveButton(item, true), down = moveButton(item, false);
      if (up) up.disabled = index === 0;
      if (down) down.disabled = index === items.length - 1;
    });
  }

  function drop() {
    if (!dragged) return;
    renumberButtons(dragged.parentNode);
    dragged.classList.remove("dragging");
    dragged = null;
    if (order() === orderBefore) return;
    dirty = true;
    redraw();  // the posted order is the cards' order: numbers and conditions follow it
  }
  form.addEventListener("pointerup", drop);
  form.addEventListener("pointercancel", drop);

  // --- redraw when what a question offers changes -----------------------------------------
  form.addEventListener("change", (event) => {
    // A kind shows its own fields by CSS alone; a condition's answers come from the server.
    if (event.target.matches("select.condition-question")) redraw();
  });
  form.addEventListener("input", () => { dirty = true; status(""); });

  // The action is the button pressed. htmx reads the form when the request leaves, which
  // for a request queued behind another is after that one redrew the form: the pressed
  // button is gone then, so the action is taken from the click itself.
  document.body.addEventListener("htmx:configRequest", (event) => {
    const pressed = event.detail.triggeringEvent && event.detail.triggeringEvent.submitter;
    if (event.detail.elt === form && pressed && pressed.name === "op") {
      event.detail.parameters.op = pressed.value;
    }
  });

  // What is typed while a redraw is on its way is put back into the redrawn form (its
  // fields keep their ids), so a slow answer never swallows keystrokes.
  let typedMeanwhile = null;
  function remember(event) {
    const field = event.target;
    if (!typedMeanwhile || !field.id) return;
    typedMeanwhile[field.id] = field.type === "checkbox" ? field.checked : field.value;
  }
  form.addEventListener("input", remember);
  form.addEventListener("change", remember);
  document.body.addEventListener("htmx:beforeRequest", (event) => {
    if (event.detail.elt === form) typedMeanwhile = {};
  });
  function putBack() {
    const typed = Object.entries(typedMeanwhile || {});
    typed.forEach(([id, value]) => {
      const field = document.getElementById(id);
      if (!field) return;
      if (field.type === "checkbox") field.checked = value;
      else field.value = value;
    });
    typedMeanwhile = null;
    return typed.length > 0;
  }

  document.body.addEventListener("htmx:beforeRequest", (event) => {
    const button = event.detail.requestConfig && event.detail.requestConfig.triggeringEvent &&
      event.detail.requestConfig.triggeringEvent.submitter;
    if (event.detail.elt === form && button && button.value === "save") status(gettext("Saving…"));
  });
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target === form) {
      const typed = putBack();
      if (form.querySelector("#saved")) dirty = typed;
      else if (form.querySelector("#save-errors")) {
        const first = form.querySelector(".has-error");
        if (first) first.scrollIntoView({ block: "center" });
      }
      // After adding or removing, the cursor goes where the next keystroke belongs.
      const next = form.querySelector("#focus-next");
      const target = next && document.getElementById(next.dataset.target);
      if (target) {
        target.focus({ preventScroll: true });
        target.scrollIntoView({ block: "center" });
      }
    }
    applyConditions();
  });
  document.body.addEventListener("htmx:sendError", () => status(gettext("Not sent: the server did not answer. Your edits are still in the form.")));

  function status(text) {
    const element = document.getElementById("dirty-status");
    if (element) element.textContent = text || (dirty ? gettext("Unsaved changes") : "");
  }

  form.addEventListener("click", (event) => {
    if (event.target.id !== "publish-link" || !dirty) return;
    event.preventDefault();
    status(gettext("Save the draft first: publishing takes the saved draft."));
    document.getElementById("save-button").focus();
  });
  window.addEventListener("beforeunload", (event) => { if (dirty) event.preventDefault(); });
  form.addEventListener("submit", (event) => {
    // A plain (non-htmx) save leaves the page: nothing to warn about.
    if (!window.htmx && event.submitter && event.submitter.value === "save") dirty = false;
  });

  // --- the preview: conditional questions appear as on the coding page (questions.js) ----
  function applyConditions() {
    if (preview && window.QuestionConditions) window.QuestionConditions(preview)();
  }
  if (preview) {
    preview.addEventListener("change", applyConditions);
    preview.addEventListener("input", applyConditions);
  }
  applyConditions();
})();
