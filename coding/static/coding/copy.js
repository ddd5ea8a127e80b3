// Copy buttons: a button.copy-text names what it copies by data-copies (a textarea's
// value, or an element's text: the agreement page's paper text, a new invite or reset
// link). Without this file the buttons stay hidden and the text is selected by hand.
(function () {
  "use strict";
  function copied(button) {
    const label = button.textContent;
    button.textContent = button.dataset.copied;
    setTimeout(() => { button.textContent = label; }, 2000);
  }
  function select(element) {
    if (element.select) { element.select(); return; }
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  document.querySelectorAll("button.copy-text[data-copies]").forEach((button) => {
    const source = document.getElementById(button.dataset.copies);
    if (!source) return;
    button.hidden = false;
    button.addEventListener("click", () => {
      const text = "value" in source ? source.value : source.textContent.trim();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(() => copied(button), () => select(source));
      } else {
        // Plain http (not localhost): the clipboard API is refused; select and copy.
        select(source);
        if (document.execCommand("copy")) copied(button);
      }
    });
  });
})();
