// The driver of the engine-building kinds (grading/kinds/engine_build.py), run after the learner's JavaScript or
// TypeScript (already stripped to JavaScript) in the same scope, so Value, MLP and train are the learner's.
// Each case calls chainrule_engine_check(kind, task); the kinds are as in engine_driver.py, with methods
// for the operations (a.add(b), a.mul(b), a.sub(b), a.div(b), a.pow(k), a.neg(), a.exp(), a.tanh(), a.relu())
// and model.forward(point) for a network's outputs.

function _chainruleClass(name, found) {
  if (typeof found !== "function") throw new ReferenceError("no class named " + name + " was found in your file");
  return found;
}

function _chainruleNumber(x, what) {
  if (x !== null && typeof x === "object" && "data" in x) x = x.data;
  if (typeof x !== "number") throw new TypeError(what + " must be a number (or a Value holding one), not " + typeof x);
  return x;
}

function _chainruleTopological(root) {
  const order = [];
  const seen = new Set();
  const stack = [[root, false]];
  while (stack.length) {
    const [node, done] = stack.pop();
    if (done) {
      order.push(node);
      continue;
    }
    if (seen.has(node)) continue;
    seen.add(node);
    stack.push([node, true]);
    if (node._prev === undefined || node._prev === null) {
      throw new TypeError("your Value has no _prev: keep the inputs of every result in this._prev");
    }
    const children = Array.from(node._prev);
    for (let i = children.length - 1; i >= 0; i--) if (!seen.has(children[i])) stack.push([children[i], false]);
  }
  return order;
}

function _chainruleGraph(task) {
  const V = _chainruleClass("Value", typeof Value === "undefined" ? undefined : Value);
  const env = new Map();
  task.leaves.forEach((name, i) => env.set(name, new V(task.values[i])));
  for (const [label, op, first, second] of task.nodes) {
    const a = env.get(first);
    if (typeof a[op] !== "function") throw new TypeError("your Value has no method " + op + "()");
    let result;
    if (op === "pow") result = a.pow(second);
    else if (second === undefined) result = a[op]();
    else result = a[op](env.get(second));
    env.set(label, result);
  }
  const out = env.get(task.output);
  if (task.mode === "local") {
    out.grad = 1;
    const order = _chainruleTopological(out);
    for (let i = order.length - 1; i >= 0; i--) {
      if (typeof order[i]._backward !== "function") {
        throw new TypeError("your Value has no _backward: give every Value one (a function that does nothing, for a leaf)");
      }
      order[i]._backward();
    }
  } else {
    out.backward();
  }
  const names = task.leaves.concat(task.nodes.map((node) => node[0]));
  return names.flatMap((name) => [env.get(name).data, env.get(name).grad]);
}

function _chainruleModel(task) {
  const M = _chainruleClass("MLP", typeof MLP === "undefined" ? undefined : MLP);
  const sizes = task.sizes;
  const model = new M(sizes[0], sizes.slice(1));
  const parameters = Array.from(model.parameters());
  if (parameters.length !== task.params.length) {
    throw new Error("new MLP(" + sizes[0] + ", [" + sizes.slice(1) + "]).parameters() gave " + parameters.length +
      " parameters; a network of these sizes has " + task.params.length + " (every neuron's weights, then its bias)");
  }
  parameters.forEach((p, i) => { p.data = task.params[i]; });
  return [model, parameters];
}

function _chainruleOutputs(model, point) {
  const out = model.forward(point);
  return Array.isArray(out) ? out : [out];
}

function _chainruleMlp(task) {
  const [model, parameters] = _chainruleModel(task);
  const outputs = task.points.flatMap((point) => _chainruleOutputs(model, point));
  let total = outputs[0];
  for (const y of outputs.slice(1)) total = total.add(y);
  total.backward();
  const numbers = outputs.map((y) => y.data).concat(parameters.map((p) => p.grad));
  return task.walk ? numbers.concat(_chainruleWalk(task)) : numbers;
}

function _chainruleWalk(task) {
  const [model] = _chainruleModel(task);
  const out = _chainruleOutputs(model, task.points[0])[0];
  out.backward();
  const order = _chainruleTopological(out);
  if (order.length > task.most) return [0];
  const at = new Map(order.map((node, i) => [node, i]));
  const walked = [order.length];
  for (const node of order) {
    const inputs = Array.from(node._prev).map((child) => at.get(child));
    walked.push(task.ops.indexOf(node._op === undefined ? "" : node._op),
      _chainruleNumber(node.data, "every node's data"), _chainruleNumber(node.grad, "every node's grad"),
      inputs.length, ...inputs);
  }
  return walked;
}

function _chainruleTrain(task) {
  const [model] = _chainruleModel(task);
  const fit = _chainruleClass("train", typeof train === "undefined" ? undefined : train);
  const losses = fit(model, task.points, task.labels, task.steps, task.lr);
  if (!Array.isArray(losses)) throw new TypeError("train must return an array of the losses, one per step");
  const numbers = losses.map((loss) => _chainruleNumber(loss, "every loss train returns"));
  let right = 0;
  task.points.forEach((point, i) => {
    const score = _chainruleNumber(_chainruleOutputs(model, point)[0], "the network's output");
    if ((score > 0 ? 1 : -1) === task.labels[i]) right += 1;
  });
  return numbers.concat([right / task.points.length]);
}

function chainrule_engine_check(kind, task) {
  return { graph: _chainruleGraph, mlp: _chainruleMlp, train: _chainruleTrain }[kind](task);
}
