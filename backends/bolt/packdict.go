package bolt

// packDict is the preset dictionary of packDeflateDict: common English
// words, lower case and capitalised, the most common last (DEFLATE reaches
// the end of a dictionary with the shortest distances). A conversation turn
// of a few hundred bytes has few repeats of its own; with the dictionary
// its first "because", "really" or "I'm" is a back-reference too. It is
// generic English, not drawn from any benchmark's data, and part of store
// format 3: it must never change (a new one needs a new packing code).
// Measured on the 52k LoCoMo and LongMemEval dev turns: DEFLATE alone
// leaves 47.5% of the content, with this dictionary 43.3%.
const packDict = "" +
	"Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May " +
	"June July August September October November December Morning Afternoon Evening Night Week " +
	"Weekend Month Yesterday Tomorrow Tonight Recently Together Already Enough Though Although " +
	"Whether Without Within During Against Toward Since Until Around Across Along Behind Below " +
	"Above Under Among Beyond School College University Class Teacher Student Book Books Music " +
	"Movie Movies Game Games Food Dinner Lunch Breakfast Restaurant Travel Trip Vacation House " +
	"Home City Country World Water Money Health Doctor Hospital Job Career Project Team " +
	"Company Office Meeting Parents Mother Father Mom Dad Sister Brother Son Daughter Kids " +
	"Children Baby Husband Wife Wedding Birthday Party Dog Cat Pet Car Weather Summer Winter " +
	"Spring Fall Beautiful Amazing Awesome Happy Excited Glad Sorry Worried Tired Hard Easy " +
	"Nice Fun Best Better Favorite Special Whole Small Big Large Old Young High Low Open Close " +
	"Start Started Finished Finally Today's Tips Ideas Idea Plan Plans Question Questions " +
	"Answer Advice Try Trying Tried Learn Learning Learned Read Reading Write Writing Watch " +
	"Watching Play Playing Playing Cook Cooking Run Running Walk Walking Talk Talking Call " +
	"Called Told Tell Say Said Says Ask Asked Made Make Making Take Taking Took Give Gave " +
	"Given Find Found Keep Kept Feel Felt Look Looking Looked Seem Seems Mean Means Come Came " +
	"Coming Go Went Gone Going Get Getting Got Let Put Set Show Showed Turn Turned Move Moved " +
	"Live Lived Living Stay Stayed Bring Brought Buy Bought Pay Paid Spend Spent Meet Met " +
	"Leave Left Hear Heard Believe Remember Wonder Hope Hoped Wish Wanted Needs Using Used " +
	"Enjoy Enjoyed Share Shared Support Create Created Improve Include Includes Including " +
	"Provide Provides Based Such Each Both Few Many Most Own Same Another Several Various " +
	"Specific Certain Able Possible Likely Usually Often Sometimes Always Again Also Just " +
	"Really Very Quite Too So Still Yet However Therefore Instead Rather Otherwise Here's " +
	"There's What's How's He's She's We're They're Isn't Aren't Wasn't Weren't Doesn't Didn't " +
	"Won't Wouldn't Couldn't Shouldn't Haven't Hasn't I'd You'll You've We've Because Through " +
	"Between Something Different However Around Another Important Actually Probably Especially " +
	"Information Experience Interesting Recommend Definitely Suggestions Understand " +
	"Considering Relationship Particular Community Available Opportunity Business Family " +
	"Friends Really Thought Great Would Could Should About Which Their There These Those Other " +
	"After Before Again Where While Being Think Going Little People Always Never Every Maybe " +
	"Still Might Right Thing Things Sounds Feel Like Just Also Been Have With This That What " +
	"When Your Will More Some Very Good Time Know Want Make From They Them Were Then Than Into " +
	"Over Only Even Much Well Back Need Help Sure Love Today Work Year Years First Last Long " +
	"Also Here How Its Our Out New One Two Can Get Got But All Any May Day Way See Use Her Him " +
	"His She Has Had Did Does Not Are Was You For And The Of To A In Is It I That's It's I'm " +
	"Don't Can't You're I've I'll Let's Thank Thanks Yes No Oh Wow Hey Hi So monday tuesday " +
	"wednesday thursday friday saturday sunday january february march april may june july " +
	"august september october november december morning afternoon evening night week weekend " +
	"month yesterday tomorrow tonight recently together already enough though although whether " +
	"without within during against toward since until around across along behind below above " +
	"under among beyond school college university class teacher student book books music movie " +
	"movies game games food dinner lunch breakfast restaurant travel trip vacation house home " +
	"city country world water money health doctor hospital job career project team company " +
	"office meeting parents mother father mom dad sister brother son daughter kids children " +
	"baby husband wife wedding birthday party dog cat pet car weather summer winter spring " +
	"fall beautiful amazing awesome happy excited glad sorry worried tired hard easy nice fun " +
	"best better favorite special whole small big large old young high low open close start " +
	"started finished finally today's tips ideas idea plan plans question questions answer " +
	"advice try trying tried learn learning learned read reading write writing watch watching " +
	"play playing playing cook cooking run running walk walking talk talking call called told " +
	"tell say said says ask asked made make making take taking took give gave given find found " +
	"keep kept feel felt look looking looked seem seems mean means come came coming go went " +
	"gone going get getting got let put set show showed turn turned move moved live lived " +
	"living stay stayed bring brought buy bought pay paid spend spent meet met leave left hear " +
	"heard believe remember wonder hope hoped wish wanted needs using used enjoy enjoyed share " +
	"shared support create created improve include includes including provide provides based " +
	"such each both few many most own same another several various specific certain able " +
	"possible likely usually often sometimes always again also just really very quite too so " +
	"still yet however therefore instead rather otherwise here's there's what's how's he's " +
	"she's we're they're isn't aren't wasn't weren't doesn't didn't won't wouldn't couldn't " +
	"shouldn't haven't hasn't i'd you'll you've we've because through between something " +
	"different however around another important actually probably especially information " +
	"experience interesting recommend definitely suggestions understand considering " +
	"relationship particular community available opportunity business family friends really " +
	"thought great would could should about which their there these those other after before " +
	"again where while being think going little people always never every maybe still might " +
	"right thing things sounds feel like just also been have with this that what when your " +
	"will more some very good time know want make from they them were then than into over only " +
	"even much well back need help sure love today work year years first last long also here " +
	"how its our out new one two can get got but all any may day way see use her him his she " +
	"has had did does not are was you for and the of to a in is it i that's it's i'm don't " +
	"can't you're i've i'll let's thank thanks yes no oh wow hey hi so "
