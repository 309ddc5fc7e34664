%% Programs that call what the checker does not model (file, a service
%% module that does not exist), modelled calls and a checked helper, run
%% with stubs (option `stubs', see mce_stubs_tests).
-module(tprog_stubs).

-export([read_info/0, dynamic_calls/0, spawn_stubbed/0, env/0, helper_calls/0, helper/1,
         service/0, service_race/0, blocking_stub/0, fake_info/1, fake_get_env/2,
         service_stub/1, unknown_service/0]).

%% An unsupported call (file:read_file_info/1).
read_info() ->
    exit({result, file:read_file_info("/etc/passwd")}).

%% The same call through apply/3, a computed module, fun M:F/A,
%% erlang:make_fun/3 and a fun passed around.
dynamic_calls() ->
    M = id(file),
    F = fun file:read_file_info/1,
    G = erlang:make_fun(M, read_file_info, 1),
    exit({result, [apply(file, read_file_info, ["a"]), erlang:apply(M, read_file_info, ["b"]),
                   M:read_file_info("c"), F("d"), G("e"), lists:map(F, ["f"])]}).

%% spawn(M, F, Args) of a stubbed call runs the stub in the new process.
spawn_stubbed() ->
    Self = self(),
    spawn(tprog_stubs_absent, run, [Self]),
    receive Msg -> exit({result, Msg}) end.

%% A modelled call (application:get_env/2) stubbed.
env() ->
    exit({result, application:get_env(kernel, anything)}).

%% A call into checked code stubbed: the remote call, the local call and
%% fun helper/1 all run the stub.
helper_calls() ->
    exit({result, {tprog_stubs:helper(1), helper(2), (fun helper/1)(3)}}).

helper(X) -> {real, X}.

%% A service the program calls (a module that does not exist): the stub
%% talks to a server process of the model and waits for its reply.
service() ->
    Server = spawn(fun() -> serve(0) end),
    register(service_model, Server),
    A = tprog_stubs_absent:request(add),
    B = tprog_stubs_absent:request(add),
    exit({result, {A, B}}).

%% Two clients of the stubbed service race: both orders are explored.
service_race() ->
    Server = spawn(fun() -> serve(0) end),
    register(service_model, Server),
    Self = self(),
    spawn(fun() -> Self ! {a, tprog_stubs_absent:request(add)} end),
    spawn(fun() -> Self ! {b, tprog_stubs_absent:request(add)} end),
    R = receive {a, N} -> N end,
    receive {b, _} -> ok end,
    exit({result, {a_got, R}}).

serve(N) ->
    receive
        {request, From, add} -> From ! {reply, N + 1}, serve(N + 1)
    end.

%% The stub of this call waits for a message that never comes.
blocking_stub() ->
    tprog_stubs_absent:wait(),
    exit({result, unreachable}).

%% An unsupported call without a stub.
unknown_service() ->
    tprog_stubs_absent:request(add).

%% Stubs, as exported functions.
fake_info(Name) -> {ok, {fake_info, Name}}.

fake_get_env(App, Key) -> {ok, {App, Key, stubbed}}.

service_stub(Req) ->
    service_model ! {request, self(), Req},
    receive {reply, R} -> R end.

id(X) -> X.
