"""Read-only probes of a running JupyterLab (its ``window.jupyterapp``), evaluated by Playwright: shared by
the JupyterLab test (``tests/test_jupyterlab.py``) and the JupyterHub test (``tests/book/test_jupyterhub.py``)."""

KERNEL_READY = """() => {
  const w = window.jupyterapp.shell.currentWidget, s = w && w.context && w.context.sessionContext;
  return !!(s && s.isReady && s.session && s.session.kernel && s.session.kernel.status === 'idle');
}"""
"""True once the current notebook's kernel is started and idle."""

RUN_OVER = """() => {
  // Over when the kernel is idle, no cell is queued or running, and every code cell has run or
  // one failed (Run All stops at an error: the cells after it keep no execution count).
  const w = window.jupyterapp.shell.currentWidget, cells = w.content.model.cells;
  let pending = false, failed = false;
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (c.executionState === 'running') return false;
    if (!c.executionCount) pending = true;
    for (let j = 0; j < c.outputs.length; j++) failed = failed || c.outputs.get(j).type === 'error';
  }
  return (failed || !pending) && w.context.sessionContext.session.kernel.status === 'idle';
}"""
"""True once Run All is over: the kernel idle, no cell queued or running, every code cell run or one failed."""
