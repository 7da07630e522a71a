# Keep the system messages and the last $n user turns of .[$key] (same rule as ctxmgr trim).
.[$key] as $m
| [$m[] | select(.role == "system")] as $sys
| [$m[] | select(.role != "system")] as $rest
| [range(0; $rest | length) | select($rest[.].role == "user")] as $users
| if ($users | length) <= $n then .
  elif $n == 0 then .[$key] = $sys
  else .[$key] = $sys + $rest[$users[($users | length) - $n]:]
  end
