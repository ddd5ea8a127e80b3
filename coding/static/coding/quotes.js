// Evidence quotes found again in an item's rendered text and marked (the review page's
// review.js and the coding page's code.js). A quote is its words in order
// with any whitespace between them: the page shows markdown and line breaks differently
// from the stored text. Of several places, the one nearest the offset the server located
// the quote at is taken (the stored and the shown text differ little before it).
(function () {
  "use strict";
  const escape = (word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  // Wraps the quote's text in `field` in elements made by make(), one per text node it
  // spans; returns them in order, or [] when the words are not there.
  function mark(field, quote, near, make) {
    const words = quote.split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const nodes = [];
    let text = "";
    const walker = document.createTreeWalker(field, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]); text += walker.currentNode.data; }
    const pattern = new RegExp(words.map(escape).join("\\s+"), "g");
    let found = null;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      if (!found || Math.abs(match.index - near) < Math.abs(found.index - near)) found = match;
    }
    if (!found) return [];
    const start = found.index, end = start + found[0].length;
    const marks = [];
    nodes.forEach(([node, offset]) => {
      const from = Math.max(start, offset), to = Math.min(end, offset + node.data.length);
      if (from >= to) return;
      const range = document.createRange();
      range.setStart(node, from - offset);
      range.setEnd(node, to - offset);
      const element = make();
      range.surroundContents(element);
      marks.push(element);
    });
    return marks;
  }

  window.QuoteMarks = { mark };
})();
