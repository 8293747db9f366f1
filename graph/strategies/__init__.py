"""The strategies' own retrieval: each module is one strategy's runner and, where its model calls
its own tools, its declared tool loop. Which strategies exist, and how each runs, is declared
once in ``graph.registry``; the agent's core modules read that declaration and never import this
package, which imports them.
"""
