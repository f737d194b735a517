ROWS = [
    # casual stories, no password word nearby
    ("story, no cue", "my dad's netflix has been '⟦{pet}{year}⟧' forever, he refuses to change it"),
    (
        "story, no cue",
        "lol my mom still uses ⟦{pw}⟧ for literally everything, her email, her bank, the ipad",
    ),
    (
        "story, no cue",
        "grandma wrote ⟦{pwc}⟧ on a post-it and stuck it to the monitor. the monitor. in the front room.",
    ),
    (
        "story, no cue",
        "ok so the hulu account is my sister's, you get in with her gmail and ⟦{pw}⟧",
    ),
    (
        "story, no cue",
        "Fun fact: the router in the break room still opens with ⟦{pwl}⟧. Nobody has touched it since 2019.",
    ),
    (
        "story, no cue",
        "we all share the spotify family thing, it's under jake's email and ⟦{pw}⟧ gets you in",
    ),
    (
        "story, no cue",
        "my roommate typed ⟦{pw}⟧ into the smart tv while I was watching, so now I know it lol",
    ),
    (
        "story, no cue",
        "The kiosk in the lobby boots into admin if you type ⟦{pwc}⟧ at the prompt. Found that out the hard way.",
    ),
    (
        "story, no cue",
        "remember the old camping laptop? it's still ⟦{pwl}⟧, the one we picked on the trip",
    ),
    ("story, no cue", 'he literally said it out loud in the standup: "⟦{pw}⟧". Everyone heard.'),
    ("story, no cue", "my uncle has had ⟦{pet}{d2}⟧ on his disney+ since the dog was a puppy"),
    (
        "story, no cue",
        "fyi the shared drive under marketing@ takes ⟦{pws}⟧ now, they rotated it after the intern left",
    ),
    ("story, no cue", "if the xbox asks, it's ⟦{pwl}⟧. kids figured out the old one"),
    ("story, no cue", "Honestly I just use ⟦{pwp}⟧ on every forum I've ever joined, don't judge"),
    (
        "story, no cue",
        "She gets into her work laptop with ⟦{pwc}⟧ and wonders why IT keeps emailing her",
    ),
    (
        "story, no cue",
        "the garage wifi is 'NETGEAR-44' and it wants ⟦{pwl}⟧, just so you're not stuck outside",
    ),
    (
        "story, no cue",
        "so I sat down at Mike's desk, typed ⟦{pw}⟧ like he told me to, and the whole CRM opened up",
    ),
    (
        "story, no cue",
        "Tbh our landlord's portal is still on ⟦{pwc}⟧, the one he texted everyone in the building last year",
    ),
    (
        "story, no cue",
        "lmao he picked ⟦{pw}⟧ for the family ipad because 'nobody would guess the dog's name'",
    ),
    (
        "story, no cue",
        "For the demo account just use demo@ourshop.io + ⟦{pws}⟧, it resets every night anyway",
    ),
    (
        "story, no cue",
        "the amazon login we all use for office supplies: purchasing@ and then ⟦{pwc}⟧",
    ),
    ("story, no cue", "Dave, the kid's tablet unlocks with ⟦{d6}⟧ if she forgets again"),
    # hints that give it away
    (
        "hint gives it away",
        "it's the team name + the year we started, all lowercase, so ⟦kestrels{year}⟧",
    ),
    (
        "hint gives it away",
        "hint: cat's name then our street number. (⟦{pet}{d3}⟧, don't tell anyone I told you)",
    ),
    (
        "hint gives it away",
        "same pattern as always, company initials plus the quarter: ⟦ACME-Q3-{year}⟧",
    ),
    (
        "hint gives it away",
        "you know the drill, mascot with a capital and the zip code. ⟦Otter{zip}⟧ this time",
    ),
    (
        "hint gives it away",
        "Think of the place we had our first offsite, then the month number twice. ⟦Lisbon0{d2}⟧ if you can't remember",
    ),
    ("hint gives it away", "it's your birthday backwards, ⟦{d6}⟧, I set it so you'd never forget"),
    (
        "hint gives it away",
        "for the shared laptop: first word of our slogan + the floor we're on + !  → ⟦Build{d2}!⟧",
    ),
    (
        "hint gives it away",
        "the guest one is just the building name and the unit, like ⟦Parkview{d3}⟧",
    ),
    (
        "hint gives it away",
        "clue for the escape-room style lockbox: the answer is our wedding date, ⟦{d4}⟧",
    ),
    ("hint gives it away", "mom said 'same as the old one but with a 2 at the end' so ⟦{pwl}2⟧"),
    ("hint gives it away", "it's just qwerty with the year on the end: ⟦qwerty{year}⟧"),
    (
        "hint gives it away",
        "the pattern this season is season+year+symbol, so right now ⟦Autumn{year}#⟧",
    ),
    # codes spelled out in words
    ("code in words", "door's ⟦{en4}⟧, then push hard, it sticks"),
    ("code in words", "ok read it back to me… ⟦{en6}⟧. yeah that's the verification one"),
    (
        "code in words",
        "He said the lockbox is ⟦{en4}⟧ but I couldn't hear the last one over the traffic",
    ),
    (
        "code in words",
        "Voicemail from the bank: 'your one-time code is ⟦{en6}⟧'. why do they read it so slowly",
    ),
    ("code in words", "combo on the gym locker: ⟦{en3}⟧"),
    ("code in words", "The keypad for the side entrance is ⟦{en4}⟧ followed by the star key."),
    ("code in words", "Transcript 00:14:32 - Sam: yeah it's, uh, ⟦{en4}⟧ for the back gate"),
    ("code in words", "just text me when you're there, it's ⟦{en4}⟧ on the garage panel"),
    # keys split in halves or across lines
    (
        "key split in halves",
        "splitting this so slack doesn't flag it:\nfirst half ⟦sk-proj-{b20}⟧\nsecond half ⟦{b24}⟧",
    ),
    ("key split in halves", "key part 1: ⟦{b24}⟧\n(part 2 in the next message)"),
    (
        "key split in halves",
        "part 2 of the key from before → ⟦{b32}⟧ — just paste them together, no space",
    ),
    ("key split in halves", "the stripe secret is ⟦sk_live_{b12}⟧ + ⟦{b16}⟧ (glue them together)"),
    (
        "key split across lines",
        "Token wrapped in the email, so copy carefully:\n⟦ghp_{b16}⟧\n⟦{b20}⟧",
    ),
    (
        "key split across lines",
        "here's the license key, it wrapped on my screen:\n⟦{up4}-{up4}-{up4}⟧\n⟦-{up4}-{up4}⟧",
    ),
    ("key split in halves", "I'll give you half now and half in person: ⟦{b16}⟧…"),
    (
        "key split in halves",
        "AWS secret for the backup user, broken up: ⟦{b20}⟧ / ⟦{b20}⟧ (no slash when you paste)",
    ),
    # recovery / backup codes
    (
        "backup code list",
        "backup codes for the ops google account, use one and cross it off:\n⟦{rc}⟧\n⟦{rc}⟧\n⟦{rc}⟧\n⟦{rc}⟧\n⟦{rc}⟧",
    ),
    (
        "backup code list",
        "GitHub recovery codes (save these!):\n⟦{hex8}⟧ ⟦{hex8}⟧\n⟦{hex8}⟧ ⟦{hex8}⟧",
    ),
    (
        "backup code list",
        "Two of the emergency codes are left: ⟦{rc}⟧ and ⟦{rc}⟧. I used the rest.",
    ),
    (
        "backup code list",
        "Recovery key for the bitlocker drive: ⟦{d6}-{d6}-{d6}-{d6}-{d6}-{d6}-{d6}-{d6}⟧",
    ),
    ("backup code list", "1. ⟦{rc}⟧ (used)\n2. ⟦{rc}⟧\n3. ⟦{rc}⟧\n4. ⟦{rc}⟧"),
    (
        "backup code list",
        "here's one of the spare 2FA codes for the twitter account, ⟦{rc}⟧, use it before friday",
    ),
    ("backup code list", "apple recovery key ⟦{rcu}-{rcu}-{rcu}⟧, printed copy is in my desk"),
    (
        "backup code list",
        "Saved from the setup screen:\n- ⟦{rcu}⟧\n- ⟦{rcu}⟧\n- ⟦{rcu}⟧\nthe others are in the binder",
    ),
    # lock, door, gate, building codes with separators
    ("door code with separators", "bike lock is ⟦{sep}⟧, it's the one on the blue bike"),
    ("door code with separators", "building entrance ⟦{keypad}⟧ then the elevator key fob"),
    ("door code with separators", "Gate: ⟦{keypad}⟧. If it beeps twice just try again."),
    ("door code with separators", "storage unit 14B, padlock ⟦{sep}⟧"),
    ("door code with separators", "side door keypad ⟦{sep}⟧ (they changed it monday)"),
    (
        "door code with separators",
        "for the airbnb: lockbox by the mailbox, ⟦{sep}⟧, keys are inside",
    ),
    ("door code with separators", "Parking garage after 10pm needs ⟦{keypad}⟧ at the ramp"),
    (
        "door code with separators",
        "u-lock on the rack outside, ⟦{sep}⟧, leave it on the last digit when done",
    ),
    ("door code with separators", "suitcase lock, spinning dials: ⟦{d3}⟧ on both"),
    (
        "door code with separators",
        "office front door after hours - punch ⟦{keypad}⟧ and wait for the green light",
    ),
    (
        "door code with separators",
        "The alarm panel disarm is ⟦{d4}⟧ then 'off'. You have 30 seconds.",
    ),
    # partial PINs
    (
        "partial PIN",
        "I only remember the first two digits of the card PIN, ⟦{d2}⟧, the rest is in my head somewhere",
    ),
    ("partial PIN", "last two of the pin are ⟦{d2}⟧, mom knows the first two"),
    ("partial PIN", "starts with ⟦{d3}⟧, that's all I'm telling you over chat"),
    ("partial PIN", "pin ends in ⟦{d2}⟧ if that helps narrow it down"),
    # numbered seed words
    (
        "numbered seed words",
        "wallet backup (keep OFFLINE):\n1 ⟦{seed}⟧  2 ⟦{seed}⟧  3 ⟦{seed}⟧  4 ⟦{seed}⟧\n5 ⟦{seed}⟧  6 ⟦{seed}⟧  7 ⟦{seed}⟧  8 ⟦{seed}⟧\n9 ⟦{seed}⟧ 10 ⟦{seed}⟧ 11 ⟦{seed}⟧ 12 ⟦{seed}⟧",
    ),
    (
        "numbered seed words",
        "words 1-6 of the ledger phrase: 1.⟦{seed}⟧ 2.⟦{seed}⟧ 3.⟦{seed}⟧ 4.⟦{seed}⟧ 5.⟦{seed}⟧ 6.⟦{seed}⟧ — you have the other half",
    ),
    ("numbered seed words", "#7 is ⟦{seed}⟧ and #8 is ⟦{seed}⟧, I misspelled them on the card"),
    (
        "numbered seed words",
        "Recovery phrase, in order:\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧\n⟦{seed}⟧",
    ),
    # safe dial
    ("safe dial", "safe in the back office: ⟦{dial}⟧, turn right first, 4 full turns to clear"),
    ("safe dial", "Dial instructions from Bill: clear it, then ⟦{dial}⟧ and push the handle down"),
    ("safe dial", "gun safe combo ⟦{dial}⟧"),
    ("safe dial", "the old Sentry in the closet opens at ⟦{dial}⟧, if it sticks jiggle the handle"),
    (
        "safe dial",
        "left to ⟦{n2}⟧, right past it once to ⟦{n2}⟧, left to ⟦{n2}⟧. that's the whole thing",
    ),
    # numeric file passwords
    ("numeric file password", "The Q3 payroll excel is locked, opens with ⟦{d4}⟧"),
    (
        "numeric file password",
        "pdf from the bank wants your birthdate as ⟦{d6}⟧ (YYMMDD) to open it",
    ),
    ("numeric file password", "zip is locked with ⟦{d6}⟧, same as last month's"),
    (
        "numeric file password",
        "I protected the spreadsheet, it's ⟦{d4}⟧. don't forward it outside the team",
    ),
    ("numeric file password", "statement.pdf → open with ⟦{d8}⟧"),
    # URLs with credentials, odd characters
    ("credential in URL", "clone from https://deploy:⟦{pwu}⟧@git.internal.example/infra.git"),
    ("credential in URL", "DATABASE_URL=postgres://app:⟦{pwu}⟧@10.2.0.14:5432/app_prod"),
    ("credential in URL", "the camera stream is rtsp://admin:⟦{pwu}⟧@192.168.1.88/live"),
    (
        "credential in URL",
        "pip config says index-url = https://ci:⟦{pwu}⟧@pypi.corp.example/simple",
    ),
    ("credential in URL", "curl -u ops:⟦{pws}⟧ https://nexus.example.com/service/rest/v1/status"),
    (
        "credential in URL",
        "ftp://uploads:⟦{pwu}⟧@files.vendor.example/inbox — that's where they want the csv",
    ),
    ("credential in URL", "redis://default:⟦{pwu}⟧@cache-7.example.net:6379/0"),
    # English cues
    ("after pw cue", "pw ⟦{pw}⟧ for the staging box"),
    ("after pass cue", "user: jmartin pass: ⟦{pw}⟧"),
    ("after login cue", "login for the vendor portal → orders@ourco / ⟦{pwc}⟧"),
    ("after creds cue", "creds for the lab NAS: admin, ⟦{pwc}⟧"),
    ("after code cue", "the code for the printer's admin menu is ⟦{d5}⟧"),
    ("after combo cue", "locker 212, combo ⟦{dial}⟧"),
    ("after pw cue", "new pw: ⟦{pws}⟧ (changed after the phishing thing)"),
    ("after login cue", "Login: testuser3\nPass: ⟦{pwc}⟧\nURL: https://qa.example.com"),
    ("after creds cue", "creds r ⟦{pw}⟧ same user as before"),
    ("after pw cue", "new laptop pw ⟦{pwl}⟧, change it when you get it"),
    ("after pass cue", "wifi pass is ⟦{pwl}⟧ (network: Cafe_Luna_Guest)"),
    ("after code cue", "access code for the conference line is ⟦{d7}⟧, host pin is on the invite"),
    ("after pw cue", "root pw on the pi: ⟦{pwl}⟧"),
    ("after login cue", "kiosk login = frontdesk / ⟦{pwc}⟧"),
    ("after combo cue", "combo's ⟦{d4}⟧ on the cable lock"),
    # one-time codes in sentences
    ("one-time code", "quick, the text just came in, it says ⟦{d6}⟧, type it before it times out"),
    ("one-time code", "ugh it sent the code to my phone: ⟦{d6}⟧"),
    ("one-time code", "can you put ⟦{d6}⟧ in? the auth prompt is on your screen, not mine"),
    ("one-time code", "Verification: ⟦{d6}⟧ — it's for the payroll login"),
    ("one-time code", "Got it! ⟦{d6}⟧ is what the authenticator shows right now"),
    (
        "one-time code",
        "[10:42] Nina: the okta push didn't work, here's the code from the app ⟦{d6}⟧",
    ),
    (
        "one-time code",
        "your steam guard code is ⟦{up4}{d2}⟧? no wait that was the old one. the new one is ⟦{up4}{d2}⟧",
    ),
    ("one-time code", "Your Acme login code: ⟦{d6}⟧. Don't share it with anyone."),
    # app passwords
    ("app password groups", "the gmail app password for the scanner is ⟦{app}⟧"),
    ("app password groups", "generated an app-specific one for thunderbird: ⟦{app}⟧"),
    ("app password groups", "icloud gave me ⟦{up4}-{up4}-{up4}-{up4}⟧ for the calendar sync"),
    ("app password groups", "Outlook on the old phone keeps asking, use this: ⟦{app}⟧"),
    # assistant replies that repeat a credential
    (
        "assistant repeats",
        "Saved — I'll log in with ⟦{pw}⟧ next time you ask me to check the dashboard.",
    ),
    (
        "assistant repeats",
        "Got it. I've updated the config so the staging database uses ⟦{pws}⟧ as its password.",
    ),
    (
        "assistant repeats",
        "Sure! To connect, run `mysql -u report -p` and enter ⟦{pwc}⟧ when prompted.",
    ),
    (
        "assistant repeats",
        "I tried ⟦{pw}⟧ on the admin panel but it was rejected. Could it have been rotated?",
    ),
    (
        "assistant repeats",
        "Done. The new Wi-Fi key ⟦{pwl}⟧ is set on both the 2.4 GHz and 5 GHz bands.",
    ),
    (
        "assistant repeats",
        "Understood — the door code is now ⟦{d4}⟧, I'll include it in the visitor instructions.",
    ),
    ("assistant repeats", "I entered the code ⟦{d6}⟧ and the sign-in went through."),
    (
        "assistant repeats",
        "Here's the summary:\n- Host: db.example.internal\n- User: analytics\n- Secret: ⟦{pws}⟧\nLet me know if you want it in a .env file.",
    ),
    (
        "assistant repeats",
        "Okay, I'll remember that the backup account is backup_svc with ⟦{pwc}⟧.",
    ),
    ("assistant repeats", 'Noted. For future runs I\'ll unlock the keystore with "⟦{pwp}⟧".'),
    # multi-line, emails, notes, configs
    (
        "email",
        "Hi Priya,\n\nWelcome aboard! Your laptop is on your desk.\nUsername: pshah\nTemporary: ⟦{pwc}⟧\n\nYou'll be asked to change it on first login.\n\nThanks,\nIT",
    ),
    (
        "meeting notes",
        "Notes 3/14\n- vendor demo moved to Thu\n- test tenant: demo-admin / ⟦{pws}⟧\n- Ana to send SOW",
    ),
    ("config", "[smtp]\nhost = mail.example.org\nuser = alerts\nsecret = ⟦{pws}⟧\nport = 587"),
    (
        "config",
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: ⟦{pw}⟧",
    ),
    ("log line", "2026-05-02T10:11:03Z INFO auth: attempting login user=svc_sync secret=⟦{pws}⟧"),
    (
        "handover note",
        "handover for the weekend:\n1. pager goes to Tom\n2. the jump host is bastion-2, key is on the usb\n3. if the key doesn't work, ⟦{pwc}⟧ as the fallback for ec2-user\n4. don't restart the queue",
    ),
    ("sms", "Hey it's Jen. Front door ⟦{sep}⟧, wifi ⟦{pwl}⟧. Make yourself at home!"),
    ("chat thread", "A: what do I use for the grafana?\nB: admin\nA: and?\nB: ⟦{pw}⟧"),
    ("chat thread", "> which one is it\nthe second one, ⟦{pwc}⟧, the first was the old one"),
    ("correction", "sorry typo earlier, it's ⟦{pw}⟧ not what I wrote"),
    ("correction", "wait no, capital P. ⟦{pwc}⟧"),
    ("chat thread", "me: did it work?\nhim: nope\nme: try ⟦{pwl}⟧ then, that was the old laptop's"),
    (
        "hint gives it away",
        "our anniversary + the name of the first restaurant, lowercase. so, ⟦{d4}pancho⟧",
    ),
    (
        "passphrase in prose",
        'unlock phrase for the encrypted backup: "⟦{pwp}⟧", quotes not included',
    ),
    ("env line", "export SFTP_PW='⟦{pwu}⟧'"),
    ("docker", "docker login registry.example.io -u builder -p ⟦{pws}⟧"),
    (
        "password in a story with quotes",
        "the \"top secret\" admin account on the wiki is literally 'admin' and '⟦{pw}⟧'",
    ),
    ("pin in prose", "debit card pin is ⟦{d4}⟧ if you need cash for the groceries"),
    ("voicemail code", "voicemail box 4410, the mailbox code is ⟦{d6}⟧"),
]
