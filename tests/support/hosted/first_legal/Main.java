import java.io.BufferedReader;
import java.io.InputStreamReader;

// The first element of "legal_actions": a balanced {...}, strings skipped over.
public class Main {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"type\":\"update\"") || line.contains("\"type\":\"result\"")) continue;
            int at = line.indexOf("\"legal_actions\":[");
            if (at < 0) continue;
            int start = line.indexOf('{', at), depth = 0, i = start;
            boolean inString = false;
            for (; i < line.length(); i++) {
                char c = line.charAt(i);
                if (inString) {
                    if (c == '\\') i++;
                    else if (c == '"') inString = false;
                } else if (c == '"') inString = true;
                else if (c == '{') depth++;
                else if (c == '}' && --depth == 0) break;
            }
            System.out.println("{\"action\":" + line.substring(start, i + 1) + "}");
            System.out.flush();
        }
    }
}
