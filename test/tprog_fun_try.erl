%% A try around a call of an OTP module inside a fun, the call blocking:
%% translated after gen_server was translated by an earlier check, the
%% exit raised after the process resumes must still reach the catch.
-module(tprog_fun_try).
-export([main/0]).

main() ->
    %% gen_server appears only inside the fun.
    {ok, P} = tprog_mcall:start_anon(),
    Call = fun(Req) ->
                   try gen_server:call(P, Req)
                   catch exit:{normal, {gen_server, call, [P, Req]}} -> stopped
                   end
           end,
    stopped = Call(die),
    ok.
