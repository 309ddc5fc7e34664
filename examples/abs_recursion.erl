%% Huch's Example 5.1 (paper 000_252f033da8c97ae1.txt, section 5;
%% ACCEPTANCE AC-21): a non-tail recursion that never returns and never
%% reaches a receive.  Concretely it runs out of stack (in the checker: a
%% runaway step).  Under any abstraction its stack is folded into finite
%% control (section 6 of the paper): the abstract model is finite, a
%% process that never stops and never blocks, so no deadlock and no crash
%% is proved.
-module(abs_recursion).
-export([main/0]).

main() -> f(42).

f(X) -> f(f(X)).
