// chainrule exercise: __ID__-gradients
function gradients(nodes, leaves) {
  // TODO: a forward pass, then a backward pass from the last value
  return new Array(leaves.length + nodes.length).fill(0);
}
