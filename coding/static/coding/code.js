// The coding page: keys, conditional questions, drafts that survive a reload or a
// lost connection, and evidence quotes. Without this file the form still submits;
// the server checks everything again.
(function () {
  "use strict";
  const form = document.getElementById("coding-form");
  if (!form) return;
  const evidenceInput = document.getElementById("evidence");
  const status = document.getElementById("draft-status");
  const storeKey = "workbench-draft:" + form.dataset.assignment;
  // The page's words in the reader's language (coding.labeling.views.code.JS_STRINGS).
  const strings = JSON.parse((document.getElementById("js-strings") || {}).textContent || "{}");
  const gettext = (text) => strings[text] || text;

  // Conditional questions appear as their condition is met (questions.js).
  const applyConditions = window.QuestionConditions(form);

  // --- keys -------------------------------------------------------------------
  const keys = window.QuestionKeys(form, {
    onChange: (q, choice) => {
      if (q.dataset.kind === "number" && choice.checked) q.querySelector("input.number").value = "";
    },
    extraKeys: {
      s: openSkip,
      f: toggleUnsure,
      p: () => document.getElementById("previous-link").click(),
      e: (q) => quoteSelection(q),
    },
  });
  const isTyping = keys.isTyping;

  function openSkip() {
    const skip = document.getElementById("skip");
    if (!skip) return;
    skip.open = true;
    document.getElementById("skip-reason").focus();
  }

  function toggleUnsure() {
    const box = document.getElementById("unsure");
    box.checked = !box.checked;
    changed();
  }

  form.addEventListener("submit", () => localStorage.removeItem(storeKey));

  // --- evidence ------------------------------------------------------------------
  function evidence() {
    try { return JSON.parse(evidenceInput.value || "[]"); } catch (e) { return []; }
  }

  // One colour per question (codebook order), the same on the mark and beside its question.
  const colourOf = {};
  form.querySelectorAll(".q").forEach((q, index) => { colourOf[q.dataset.key] = index % 6; });

  // Quotes are marked in the item's text: the words found again, whitespace tolerated.
  function unmarkAll() {
    document.querySelectorAll("#item mark.quote").forEach((mark) => {
      const parent = mark.parentNode;
      mark.replaceWith(...mark.childNodes);
      parent.normalize();
    });
  }

  // One finder serves both pages (quotes.js); here the first place the words stand is taken.
  function markQuote(field, quote, index) {
    const marks = window.QuoteMarks.mark(field, quote.quote, 0, () => {
      const mark = document.createElement("mark");
      mark.className = "quote hl-" + (colourOf[quote.question] || 0);
      mark.dataset.quote = String(index);
      mark.title = questionTitle(quote.question);
      return mark;
    });
    return marks[0] || null;
  }

  // A mark's tooltip names its question: number and text as the page shows them, and a
  // translated text's other language on a line of its own (the legend's text would run
  // the two together, with "required" and the condition).
  function questionTitle(key) {
    const q = form.querySelector('.q[data-key="' + CSS.escape(key) + '"]');
    if (!q) return "";
    const number = (q.querySelector("legend .qnum") || {}).textContent || "";
    const asWritten = (document.getElementById("show-original") || {}).checked;
    const texts = [q.dataset.text || "", q.dataset.original || ""];
    if (asWritten) texts.reverse();
    const [first, other] = texts;
    return (number ? number + ". " : "") + first + (other && other !== first ? "\n" + other : "");
  }
  const switchBox = document.getElementById("show-original");
  if (switchBox) switchBox.addEventListener("change", () => renderQuotes());

  function renderQuotes() {
    const all = evidence();
    unmarkAll();
    const marks = all.map((quote, index) => {
      const field = document.querySelector('#item [data-field="' + quote.field + '"]');
      return field ? markQuote(field, quote, index) : null;
    });
    form.querySelectorAll("ul.quotes").forEach((list) => {
      list.replaceChildren();
      all.forEach((quote, index) => {
        if (quote.question !== list.dataset.question) return;
        const item = document.createElement("li");
        const swatch = document.createElement("span");
        swatch.className = "swatch hl-" + (colourOf[quote.question] || 0);
        swatch.setAttribute("aria-hidden", "true");
        const show = document.createElement("button");
        show.type = "button";
        show.className = "link";
        show.textContent = "“" + quote.quote + "”";
        show.title = gettext("Show it in the text");
        show.addEventListener("click", () => {
          const mark = marks[index];
          if (!mark) return;
          mark.scrollIntoView({ block: "center" });
          mark.classList.add("flash-target");
          setTimeout(() => mark.classList.remove("flash-target"), 1500);
        });
        item.append(swatch, show, " ");
        const remove = document.createElement("button");
        remove.type = "button";
        remove.className = "link";
        remove.textContent = gettext("remove");
        remove.addEventListener("click", () => {
          const kept = evidence();
          kept.splice(index, 1);
          evidenceInput.value = JSON.stringify(kept);
          renderQuotes();
          changed();
        });
        item.appendChild(remove);
        list.appendChild(item);
      });
    });
  }

  // A selection grows to whole words at both ends ("…ablate their p" quotes "policy");
  // scripts without spaces between words (Chinese) are taken as selected.
  const wordChar = /[A-Za-z0-9\u00C0-\u024F_'\u2019-]/;

  function snapped(field, range) {
    const before = document.createRange();
    before.selectNodeContents(field);
    before.setEnd(range.startContainer, range.startOffset);
    const text = field.textContent;
    let start = before.toString().length;
    let end = start + range.toString().length;
    while (start > 0 && wordChar.test(text[start - 1]) && wordChar.test(text[start])) start--;
    while (end < text.length && wordChar.test(text[end]) && wordChar.test(text[end - 1])) end++;
    return text.slice(start, end).trim();
  }

  function quoteSelection(q) {
    const selection = window.getSelection();
    const raw = selection ? selection.toString().trim() : "";
    if (!q || !raw) { flash(gettext("Select text in the item first, then press E.")); return; }
    const anchor = selection.anchorNode && (selection.anchorNode.nodeType === 1 ? selection.anchorNode : selection.anchorNode.parentElement);
    const field = anchor && anchor.closest("#item [data-field]");
    if (!field || !field.contains(selection.focusNode)) { flash(gettext("Quotes come from the title, abstract or posts.")); return; }
    const text = snapped(field, selection.getRangeAt(0)) || raw;
    const all = evidence();
    all.push({ question: q.dataset.key, field: field.dataset.field, quote: text });
    evidenceInput.value = JSON.stringify(all);
    selection.removeAllRanges();
    renderQuotes();
    changed();
  }

  form.querySelectorAll(".quote-button").forEach((button) => {
    button.hidden = false;
    // Keep the text selection when the button is pressed with the mouse.
    button.addEventListener("mousedown", (event) => event.preventDefault());
    button.addEventListener("click", () => quoteSelection(button.closest(".q")));
  });

  function flash(message) { status.textContent = message; }

  // --- drafts ----------------------------------------------------------------------
  function snapshot() {
    const data = {};
    new FormData(form).forEach((value, name) => {
      if (name === "csrfmiddlewaretoken") return;
      (data[name] = data[name] || []).push(value);
    });
    return data;
  }

  function restore(data) {
    form.querySelectorAll("input, textarea").forEach((input) => {
      if (input.name === "csrfmiddlewaretoken" || input.name === "opened" || !(input.name in data)) {
        if ((input.type === "radio" || input.type === "checkbox") && input.name.startsWith("q-")) input.checked = false;
        if (input.name === "unsure") input.checked = false;
        return;
      }
      const values = data[input.name];
      if (input.type === "radio" || input.type === "checkbox") input.checked = values.includes(input.value);
      else input.value = values[0];
    });
  }

  function changed() {
    applyConditions();
    localStorage.setItem(storeKey, JSON.stringify({ savedAt: Date.now(), data: snapshot() }));
    status.textContent = gettext("Saving draft…");
    if (window.htmx) htmx.trigger(form, "draft");
  }

  form.addEventListener("change", changed);
  form.addEventListener("input", (event) => {
    if (!isTyping(event.target)) return;
    // A typed number replaces a "not reported"-style option of the same question.
    if (event.target.classList.contains("number")) {
      event.target.closest(".q").querySelectorAll("input[type=radio]").forEach((r) => { r.checked = false; });
    }
    changed();
  });
  document.body.addEventListener("htmx:sendError", () => {
    status.textContent = gettext("Offline: your draft is kept in this browser and will be sent when you are back.");
  });
  document.body.addEventListener("htmx:responseError", () => {
    status.textContent = gettext("The draft could not be saved on the server; it is kept in this browser.");
  });
  window.addEventListener("online", () => window.htmx && htmx.trigger(form, "draft"));

  // A draft kept in this browser that is newer than the server's wins (lost connection).
  const stored = JSON.parse(localStorage.getItem(storeKey) || "null");
  const serverSavedAt = Number(form.dataset.draftSaved) * 1000;
  if (stored && stored.savedAt > serverSavedAt) {
    restore(stored.data);
    // Send it once htmx has wired the form (it does so on DOMContentLoaded, which comes
    // after this deferred script); triggered earlier, the event finds no listener.
    const send = () => window.htmx && htmx.trigger(form, "draft");
    if (document.readyState === "complete") send();
    else window.addEventListener("load", send);
  }
  applyConditions();
  renderQuotes();
  keys.focusFirst();
})();
