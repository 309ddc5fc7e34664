%% The prop/div examples of Huch (paper 003_7dd3bcd1accd73d3.txt, section
%% 6; ACCEPTANCE AC-23): a process that stands at a proposition forever.
%% Concretely: F 42 holds for p42/0 and p84/0 and fails for p21/0.  Under
%% the even/odd abstraction the literals are abstracted first, so
%% `84 div 2' is `even div even', which is any integer: `F even' is proved
%% only for p42/0, and `G not even' is never proved for p84/0, whose
%% concrete value is 42.
-module(abs_props).
-export([p42/0, p84/0, p21/0]).

p42() -> mcerlang:prop(42), stay().
p84() -> mcerlang:prop(84 div 2), stay().
p21() -> mcerlang:prop(42 div 2), stay().

%% Waits forever (nothing is ever sent), so the run ends there.
stay() ->
    receive never -> ok end.
