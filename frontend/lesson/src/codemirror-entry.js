// Entry point bundled into static/vendor/codemirror.js.
// It re-exports only what the lesson page uses, plus a small editor factory so the
// page code does not need to know how CodeMirror's extensions fit together.
import { EditorState, Compartment } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, highlightSpecialChars,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  indentOnInput, bracketMatching, syntaxHighlighting, defaultHighlightStyle, indentUnit,
} from "@codemirror/language";
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";

/** Language support for one of "python", "javascript", "typescript". */
export function languageSupport(language) {
  if (language === "python") return python();
  if (language === "typescript") return javascript({ typescript: true });
  return javascript();
}

/**
 * Create an editor in `parent`.
 * options: {doc, language, onChange(text), label}
 * Tab indents; Escape then Tab leaves the editor (CodeMirror's documented escape hatch),
 * so keyboard users are never trapped.
 */
export function createEditor(parent, options) {
  const languageSlot = new Compartment();
  const onChange = options.onChange || (() => {});
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc || "",
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        indentUnit.of("    "),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        languageSlot.of(languageSupport(options.language || "python")),
        EditorView.contentAttributes.of({ "aria-label": options.label || "Code editor" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    /** Replace the whole text (fires onChange). */
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLanguage(language) {
      view.dispatch({ effects: languageSlot.reconfigure(languageSupport(language)) });
    },
    focus: () => view.focus(),
  };
}

export { EditorState, EditorView };
