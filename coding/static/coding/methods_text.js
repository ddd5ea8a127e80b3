// The agreement page's block for a paper, in each language: a copy button per text
// (data-copies names its textarea). Without this file the buttons stay hidden and the
// text is selected and copied by hand.
(function () {
  "use strict";
  function copied(button) {
    const label = button.textContent;
    button.textContent = button.dataset.copied;
    setTimeout(() => { button.textContent = label; }, 2000);
  }
  document.querySelectorAll("button.copy-text[data-copies]").forEach((button) => {
    const text = document.getElementById(button.dataset.copies);
    if (!text) return;
    button.hidden = false;
    button.addEventListener("click", () => {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text.value).then(() => copied(button), () => {
          text.select();
        });
      } else {
        // Plain http (not localhost): the clipboard API is refused; select and copy.
        text.select();
        if (document.execCommand("copy")) copied(button);
      }
    });
  });
})();
