%% @doc A model of io's output functions for checked code: the Erlang I/O
%% protocol towards a group leader.
%%
%% Not called directly: the translator rewrites `io:format/1,2,3',
%% `io:fwrite/1,2,3', `io:put_chars/1,2', `io:nl/0,1' and `io:write/1,2' in
%% user code into calls of this module's translation, so it runs under the
%% checker like user code.  As OTP 25's io does, the request goes to the
%% device (standard_io: the caller's group leader): when that is a process
%% of the program, it is sent `{io_request, From, ReplyAs, Request}' (ReplyAs
%% the ref of a monitor on it) and the caller waits for `{io_reply,
%% ReplyAs, Reply}' or the 'DOWN'.  When it is a `user' process of a node
%% (the default leader, or the device `user'), the text is recorded with the
%% step instead (mce_rt_io:io_record/1), as before leaders were modelled.
-module(mce_io).

-export([format/1, format/2, format/3, fwrite/1, fwrite/2, fwrite/3, put_chars/1, put_chars/2,
         nl/0, nl/1, write/1, write/2]).

-spec format(io:format()) -> ok.
format(Format) -> o_request([Format], standard_io, {format, Format, []}).

-spec format(io:format(), [term()]) -> ok.
format(Format, Args) -> o_request([Format, Args], standard_io, {format, Format, Args}).

-spec format(io:device(), io:format(), [term()]) -> ok.
format(Io, Format, Args) -> o_request([Io, Format, Args], Io, {format, Format, Args}).

-spec fwrite(io:format()) -> ok.
fwrite(Format) -> format(Format).

-spec fwrite(io:format(), [term()]) -> ok.
fwrite(Format, Args) -> format(Format, Args).

-spec fwrite(io:device(), io:format(), [term()]) -> ok.
fwrite(Io, Format, Args) -> format(Io, Format, Args).

-spec put_chars(unicode:chardata()) -> ok.
put_chars(Chars) -> o_request([Chars], standard_io, {put_chars, unicode, Chars}).

-spec put_chars(io:device(), unicode:chardata()) -> ok.
put_chars(Io, Chars) -> o_request([Io, Chars], Io, {put_chars, unicode, Chars}).

-spec nl() -> ok.
nl() -> o_request([], standard_io, nl).

-spec nl(io:device()) -> ok.
nl(Io) -> o_request([Io], Io, nl).

-spec write(term()) -> ok.
write(Term) -> o_request([Term], standard_io, {write, Term}).

-spec write(io:device(), term()) -> ok.
write(Io, Term) -> o_request([Io, Term], Io, {write, Term}).

%% io:o_request/2 of OTP 25: an error reply is raised as the reason io
%% gives it.
o_request(OrigArgs, Io, Request) ->
    case request(Io, Request) of
        {error, Reason} -> erlang:error(conv_reason(Reason), OrigArgs);
        Other -> Other
    end.

request(standard_io, Request) ->
    request(group_leader(), Request);
request(Pid, Request) when is_pid(Pid) ->
    case mce_rt_io:io_user(Pid) of
        true -> mce_rt_io:io_record(Request);
        false when Pid =:= self() -> {error, calling_self};
        false -> execute_request(Pid, io_request(Request))
    end;
%% standard_error and the devices that are not processes are written to as
%% before leaders were modelled: recorded.
request(Name, Request) when is_atom(Name), Name =/= user, Name =/= standard_error ->
    case whereis(Name) of
        undefined -> {error, arguments};
        Pid -> request(Pid, Request)
    end;
request(_Device, Request) ->
    mce_rt_io:io_record(Request).

execute_request(Pid, Converted) ->
    Mref = erlang:monitor(process, Pid),
    Pid ! {io_request, self(), Mref, Converted},
    receive
        {io_reply, Mref, Reply} ->
            erlang:demonitor(Mref, [flush]),
            Reply;
        {'DOWN', Mref, _, _, _} ->
            receive
                {'EXIT', Pid, _What} -> true
            after 0 -> true
            end,
            {error, terminated}
    end.

%% The requests OTP 25's io:io_request/2 sends (a list of characters goes
%% as a binary to a modern I/O server).
io_request({write, Term}) -> {put_chars, unicode, io_lib, write, [Term]};
io_request({format, Format, Args}) -> {put_chars, unicode, io_lib, format, [Format, Args]};
io_request(nl) -> {put_chars, unicode, "\n"};
io_request({put_chars, Enc, Chars} = Request) when is_list(Chars) ->
    case catch unicode:characters_to_binary(Chars, Enc) of
        Binary when is_binary(Binary) -> {put_chars, Enc, Binary};
        _ -> Request
    end;
io_request(Request) ->
    Request.

conv_reason(arguments) -> badarg;
conv_reason(terminated) -> terminated;
conv_reason(calling_self) -> calling_self;
conv_reason({no_translation, _, _}) -> no_translation;
conv_reason(_Reason) -> badarg.
