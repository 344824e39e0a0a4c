// The learner's own graph, drawn under a passing test that walked it (the capstone's network step): the server
// sends the test's "drawing", a trace without steps and its layout (web/drawn_graphs.py), and graph.js draws it
// as it draws every lesson graph, with its table view. The numbers are the server's texts of the learner's own.
// A graph too wide for the screen scrolls in its frame, which then takes the keyboard focus (markScrolling).
import { el, plural } from "./api.js";
import { GraphTable, GraphView, currentShape, finalState, markScrolling } from "./graph.js";

const TITLE = "Your engine's graph of your network";
const SAID = "The caption below says what it shows; the table view lists every box.";

/** The drawing of test.drawing with its heading, caption and table view, for the results of `exerciseId`. */
export function renderDrawnGraph(exerciseId, test) {
  const drawing = test.drawing;
  const name = `drawn-${exerciseId}`;
  const figure = el("figure", { class: "graph-figure" });
  const holder = el("section", { class: "drawn-graph", "aria-labelledby": `${name}-title` },
    el("h4", { id: `${name}-title` }, TITLE), figure,
    el("p", { class: "drawn-graph-caption" },
      `Your own engine made this graph: the ${plural(drawing.nodes.length, "Value")} your network built for its `,
      `output in the test “${test.name}”, found by following each Value's _prev and _op back from the output, `,
      "after your backward(). Each box shows one of your Values with its data and its grad, as your code computed ",
      "them. The boxes with no operation before them are the leaves: the weights, the biases and the inputs. ",
      "chainrule built the same graph with its own engine, and every number agrees."));
  const { values, grads } = finalState(drawing);
  const table = new GraphTable(drawing, { title: TITLE });
  table.show(values, grads, null);
  holder.append(table.element);
  let shape = null;
  const draw = () => {
    const view = new GraphView(drawing, { name, title: TITLE, shape: currentShape(), said: SAID });
    view.show(values, grads, null);
    figure.replaceChildren(view.element);
    shape = view.shape;
    holder.dataset.shape = shape;
  };
  draw();
  // Once on the page, and whenever its frame changes size: the other layout past the phone-width breakpoint,
  // and the frame focusable while the picture is larger than it.
  const watch = new ResizeObserver(() => {
    if (!figure.isConnected) { watch.disconnect(); return; }
    if (currentShape() !== shape) draw();
    markScrolling(figure, TITLE);
  });
  watch.observe(figure);
  return holder;
}
